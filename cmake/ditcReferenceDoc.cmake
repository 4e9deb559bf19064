# cmake -DINPUT= -DOUTPUT= -DSOURCE= -DBACKEND= [-DTITLE=] -P ditcReferenceDoc.cmake
# Turns mlir-tblgen's markdown into a docs/reference page: a banner that says
# where it comes from and how to refresh it in place of tblgen's own, an
# optional title, and no Hugo-only "[TOC]" line (GitHub shows it verbatim).
file(READ "${INPUT}" body)
string(REGEX REPLACE "^<!--[^\n]*-->\n\n?" "" body "${body}")
string(REGEX REPLACE "(^|\n)\\[TOC\\]\n\n?" "\\1" body "${body}")
set(text "<!-- Generated from ${SOURCE} by mlir-tblgen ${BACKEND}; do not edit. Refresh with scripts/update-reference-docs.sh. -->\n\n")
if(TITLE)
  string(APPEND text "# ${TITLE}\n\n")
endif()
string(APPEND text "${body}")
file(WRITE "${OUTPUT}" "${text}")
