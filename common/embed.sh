#!/bin/sh
# embed.sh: writes, on stdout, a C file that holds each file given as
# `const char PREFIXNAME[]` (NAME: the file's name without its extension,
# '.' and '-' as '_'), for the files built into the program: the tool
# schemas, the import map. Plain sh and awk (no xxd): make runs it in the
# build tree, sources from srcdir.
#   embed.sh SRCDIR HEADER PREFIX FILE... >OUT.c
#   embed.sh . tools_internal.h tools__schema_ fcgi/tools/schemas/run_code.input.json
set -eu
srcdir=$1
header=$2
prefix=$3
shift 3
echo "/* Made by common/embed.sh from $*; do not edit. */"
echo "#include \"$header\""
for rel in "$@"; do
    f=$srcdir/$rel
    [ -f "$f" ] || f=$rel # make found it in the build tree
    base=$(basename "$f")
    name=$(echo "${base%.*}" | tr '.-' '__')
    echo
    echo "const char $prefix$name[] ="
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
