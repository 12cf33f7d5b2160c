#!/bin/sh
# embed.sh: writes, on stdout, a C file that holds each JSON file given as
# `const char tools__schema_NAME[]` (NAME: the file's name without .json,
# '.' and '-' as '_'), for the tool schemas built into the program. Plain
# sh and awk (no xxd): make runs it in the build tree, sources from srcdir.
#   embed.sh SRCDIR fcgi/schemas/run_code.input.json ... >fcgi/tools_schemas.c
set -eu
srcdir=$1
shift
echo '/* tools_schemas.c: the JSON files of fcgi/schemas, as made by fcgi/schemas/embed.sh; do not edit. */'
echo '#include "tools_internal.h"'
for rel in "$@"; do
    f=$srcdir/$rel
    [ -f "$f" ] || f=$rel # make found it in the build tree
    name=$(basename "$f" .json | tr '.-' '__')
    echo
    echo "const char tools__schema_$name[] ="
    # Each line a C string: backslash and quote escaped, the newline kept.
    LC_ALL=C awk '{
        out = ""
        for (i = 1; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (c == "\\" || c == "\"")
                out = out "\\"
            out = out c
        }
        printf "    \"%s\\n\"\n", out
    }' "$f"
    echo '    "";'
done
