//===- ProgramReader.h - decoding a plan's programs -------------*- C++ -*-===//
//
// Reads programs/<id>.json against the manifest's hash and decodes every
// op and attribute into Program's types, refusing what the runtime cannot
// execute.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_PROGRAMREADER_H
#define DITC_RUNTIME_PLAN_PROGRAMREADER_H

#include "ditc/Runtime/Plan/Program.h"

namespace ditc::runtime {

/// Reads the program `id` of `manifest`; refuses a file whose SHA-256 does
/// not match the manifest, and any op the runtime cannot execute. Then
/// validateProgram checks it for every rank that runs it.
Program loadProgram(const Manifest &manifest, const std::string &id);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_PROGRAMREADER_H
