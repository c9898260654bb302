# Script mode helper of embed_text(): writes IN as a raw string literal to OUT.
file(READ ${IN} content)
set(delim "locklab_embed")
file(WRITE ${OUT} "// Generated from ${IN}; edit that file, not this one.\n#pragma once\n#include <string_view>\nnamespace ${NS} {\ninline constexpr std::string_view ${IDENT} = R\"${delim}(${content})${delim}\";\n}\n")
