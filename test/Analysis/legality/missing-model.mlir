// The pass needs the model facts the importer records.
// RUN: dit-opt %s -verify-diagnostics --dit-check-legality

// expected-error @+1 {{legality needs the module's 'dit.model' and 'dit.workload' attributes (ditc import sets both)}}
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
}
