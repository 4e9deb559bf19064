#!/usr/bin/env bash
# Prints MODULE with `dit.mesh = #dit.mesh<DEGREES>` added to its attributes.
# Usage: add-mesh.sh "ulysses = 2, tp = 2" module.mlir
sed "0,/^module attributes {/s//module attributes {dit.mesh = #dit.mesh<$1>, /" "$2"
