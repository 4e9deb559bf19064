// RUN: split-file %s %t
// RUN: dit-opt %t/order.mlir -verify-diagnostics --dit-mesh-layout="mesh-order=tp,tp,ring,kv_gather,pp,cfg,dp"
// RUN: dit-opt %t/degrees.mlir -verify-diagnostics --dit-mesh-layout="degrees=sp=2,tp=0,ulysses=2,ulysses=4,cfg=x,pp"
// RUN: dit-opt %t/has-placement.mlir -split-input-file -verify-diagnostics --dit-mesh-layout="degrees=tp=2"

//--- order.mlir
// expected-error @+1 {{mesh-order option names axis 'tp' twice; expected a permutation of dp, cfg, pp, ring, kv_gather, ulysses, tp}}
module attributes {dit.mesh = #dit.mesh<tp = 2>} {}

//--- degrees.mlir
// Every bad `degrees` entry is reported, each naming itself.
// expected-error @+6 {{degrees entry 'sp=2' names no mesh axis; expected one of dp, cfg, pp, ring, kv_gather, ulysses, tp}}
// expected-error @+5 {{degrees entry 'tp=0' has size '0'; expected a positive integer}}
// expected-error @+4 {{degrees entry 'ulysses=4' names axis 'ulysses' a second time; give each axis once}}
// expected-error @+3 {{degrees entry 'cfg=x' has size 'x'; expected a positive integer}}
// expected-error @+2 {{degrees entry 'pp' is not axis=size (e.g. tp=2)}}
// The module is untouched: no dit.mesh is set from a partly bad list.
module {}

//--- has-placement.mlir
// A module that already has a placement is refused, not overridden.
// expected-error @+1 {{degrees option given, but the module already has 'dit.mesh' = #dit.mesh<cfg = 2>; drop the option or the attribute, not both}}
module attributes {dit.mesh = #dit.mesh<cfg = 2>} {}

// -----

// expected-error @+1 {{degrees option given, but the module already has 'dit.deployment'}}
module attributes {dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<cfg = 2>>]>} {}
