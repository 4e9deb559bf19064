// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-mesh-layout="mesh-order=tp,tp,ring,kv_gather,pp,cfg,dp"

// expected-error @+1 {{mesh-order option names axis 'tp' twice; expected a permutation of dp, cfg, pp, ring, kv_gather, ulysses, tp}}
module attributes {dit.mesh = #dit.mesh<tp = 2>} {}
