#!/bin/bash
# docs.sh: every code name the documents give exists in the tree (TAP).
# A document names only what exists: a name in a code span (`...`) of
# doc/*.md, README.md or SECURITY.md is checked against the tree, the
# documents themselves left out:
#  - `struct NAME`, `enum NAME` or `union NAME` is one of a C source or
#    header, and `NAME[]` a word of one;
#  - `NAME()`, and a name with an underscore inside it (snake_case,
#    UPPER_CASE: a function, a constant, a configuration key, a field of the
#    result, a Makefile variable), is a word of some file of the tree: the
#    configuration keys are words of the key table, the result's and MCP's
#    fields words of the code and the tools' schemas, so they are checked as
#    any name is; `RUNMYSCRIPT_KEY`, a key's environment variable, is
#    checked as its key;
#  - a path whose first folder is one of the tree's (`sandbox/...`,
#    `tests/...`) is a file or folder of the tree, or one the build makes
#    (named in Makefile.am);
#  - a file name (`exec.c`, `kernel.py`, `result.json`) is a file of the
#    tree, wherever it lives, or a name the sources spell (a file the
#    program makes: result.json, session.json).
# An upper-case word of three letters or more inside a lower-case name or a
# path is a placeholder (`tools__NAME`, `tests/unit/test-MODULE.c`), as is
# `*`: any name fits it. Not checked, by their form: a span with a blank
# inside (a command line, a call with arguments is checked by its name), a
# dotted name that is no file (Python's `sys.path`, JSON's `_meta.x`), a
# name that starts with an underscore (Python's and JSON's, or a fragment
# such as `_end`), a plain word without an underscore (too many are
# English), an absolute path (a path on a server or in the jail), a route
# or a state path (`/mcp`, `STATE/runs/RUNID`), and fenced code blocks.
# What is left and is still no name of the tree (a system's constant, a
# name of another program) is listed in tests/docs-names.txt, one a line,
# each with its reason.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top_srcdir" || exit 1
# tap.sh's run of the program (check-sandbox) is not needed here.
RUNMYSCRIPT=${RUNMYSCRIPT:-true} RMS_JAIL_OPTIONAL=1 . tests/lib/tap.sh

DOCS=${DOCS:-"$(ls doc/*.md) README.md SECURITY.md"}

# The tree: every file of the sources but the documents checked, the build
# trees and what the tools installed.
tree_files() {
    find . \( -name .git -o -name 'build*' -o -name _build -o -name node_modules -o -name autom4te.cache \
        -o -name '_inst' \) -prune -o -type f -print | sed 's|^\./||' |
        grep -vxE 'doc/[^/]*\.md|README\.md|SECURITY\.md|tests/docs\.sh|tests/docs-names\.txt'
}
files=$(tree_files | sort)
words() { # words FILE...: the words (C-like identifiers) of the files
    xargs -d '\n' grep -hoIE '[A-Za-z_][A-Za-z0-9_]*' 2>/dev/null | sort -u
}
declare -A ALL C TAGS NAMED BASE ALLOW
while read -r w; do ALL[$w]=1; done < <(words <<<"$files")
while read -r w; do C[$w]=1; done < <(grep -E '\.[ch]$' <<<"$files" | words)
while read -r w; do TAGS[$w]=1; done < <(grep -E '\.[ch]$' <<<"$files" |
    xargs -d '\n' grep -hoE '\b(struct|enum|union)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' | sed -E 's/[[:space:]]+/ /' | sort -u)
# Names of files the sources spell (result.json, kernel_py.c in Makefile.am).
while read -r w; do NAMED[$w]=1; done < <(xargs -d '\n' grep -hoIE '[A-Za-z0-9_.+-]+\.[A-Za-z0-9]+' <<<"$files" 2>/dev/null | sort -u)
while read -r w; do BASE[$w]=1; done < <(sed 's|.*/||' <<<"$files" | sort -u)
# The allowed names; "NAME planned: ..." is a name of the layout being
# built, allowed until it exists (checked at the end).
PLANNED=""
# A line is the name as the documents write it, two blanks or more, the reason.
PLANNED=()
while IFS= read -r line; do
    w=$(sed -E 's/[[:space:]]{2,}.*//' <<<"$line") why=$(sed -E 's/^.*[^[:space:]][[:space:]]{2,}//' <<<"$line")
    ALLOW[$w]=1
    [[ $why == planned:* ]] && PLANNED+=("$w")
done < <(grep -vE '^[[:space:]]*(#|$)' tests/docs-names.txt)
TOP_DIRS=" $(grep / <<<"$files" | cut -d/ -f1 | sort -u | tr '\n' ' ') "

# The code spans of a document, "FILE:LINE<TAB>SPAN", a span that runs over
# lines joined with blanks; fenced blocks skipped.
spans() {
    awk '
    FNR == 1 { fence = 0; open = 0 }
    /^[ \t]*(```|~~~)/ { if (!open) { fence = !fence; next } }
    fence { next }
    {
        rest = $0
        while (1) {
            if (open) {
                i = index(rest, tick)
                if (!i) { buf = buf rest " "; break }
                buf = buf substr(rest, 1, i - 1)
                print where "\t" buf
                rest = substr(rest, i + length(tick)); open = 0
                continue
            }
            if (!match(rest, /`+/)) break
            tick = substr(rest, RSTART, RLENGTH)
            rest = substr(rest, RSTART + RLENGTH)
            open = 1; buf = ""; where = FILENAME ":" FNR
        }
    }
    /^[ \t]*$/ { open = 0 }   # a paragraph ends a span left open
    ' "$@"
}

# glob_re GLOB: the ERE of a name with placeholders (* or NAME) in it.
glob_re() {
    sed -E -e 's/[.+]/\\&/g' -e 's/\*/[^\/]*/g' \
        -e 's/(^|[^A-Z])[A-Z]{3,}($|[^A-Za-z])/\1[^\/]*\2/g' -e 's/(^|[^A-Z])[A-Z]{3,}($|[^A-Za-z])/\1[^\/]*\2/g' <<<"$1"
}
has_placeholder() { [[ $1 == *'*'* ]] || { [[ $1 =~ [a-z./-] ]] && [[ $1 =~ (^|[^A-Z])[A-Z]{3,}($|[^A-Za-z]) ]]; }; }
in_words() { # in_words SET NAME: NAME (with placeholders) is a word of SET
    local -n set=$1
    [ -n "${set[$2]:-}" ] && return 0
    has_placeholder "$2" || return 1
    local re k
    re="^$(glob_re "$2")\$"
    for k in "${!set[@]}"; do [[ $k =~ $re ]] && return 0; done
    return 1
}
path_ok() { # path_ok PATH: a file or folder of the tree, or one the build makes
    local p=${1%/} re
    [ -e "$p" ] && return 0
    compgen -G "$p" >/dev/null && return 0
    re="^$(glob_re "$p")(/|\$)"
    grep -qE -- "$re" <<<"$files" && return 0
    # Made by the build or a test: the path, or a folder of it beneath the
    # top one, is spelled in Makefile.am (tests/fuzz-work/crashes/).
    while [[ $p == */* ]]; do
        re=$(sed -E 's/[.+*]/\\&/g' <<<"$p")
        grep -qE -- "(^|[[:space:]=])$re(/|[[:space:]\\;]|\$)" Makefile.am && return 0
        p=${p%/*}
    done
    return 1
}

file_ok() { # file_ok NAME: a file of the tree, or a name the sources spell
    in_words BASE "$1" || in_words NAMED "$1"
}

FILE_EXT='c|h|\[ch\]|py|sh|json|mjs|js|css|html|in|am|ac|md|txt|conf|tsv|sample|yml|svg|zip|dict|mk'
check() { # check SPAN: prints the name when it is a code name the tree lacks
    local s=$1 name kind
    s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}
    if [[ $s =~ ^(struct|enum|union)[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
        name="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}" kind=tag
    elif [[ $s =~ ^([A-Za-z_][A-Za-z0-9_]*)\[\]$ ]]; then
        name=${BASH_REMATCH[1]} kind=c
    elif [[ $s =~ ^([A-Za-z][A-Za-z0-9_*]*)\(.*\)$ ]]; then
        name=${BASH_REMATCH[1]} kind=word
    elif [[ $s == *[[:space:]]* || $s == _* || $s == /* ]]; then
        return 0
    elif [[ $s == */* ]]; then
        s=${s#./}
        [[ $TOP_DIRS == *" ${s%%/*} "* ]] || return 0
        [[ $s =~ ^[A-Za-z0-9_./*+-]+$ ]] || return 0
        name=$s kind=path
    elif [[ $s =~ ^[A-Za-z0-9_*+-][A-Za-z0-9_.*+-]*\.($FILE_EXT)$ ]]; then
        name=$s kind=file
    elif [[ $s =~ ^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9*]+)+$ || $s =~ ^[A-Za-z][A-Za-z0-9]*__[A-Za-z0-9_*]+$ ]]; then
        name=$s kind=word
    else
        return 0
    fi
    [ -n "${ALLOW[$s]:-}" ] && return 0
    case $kind in
    c) in_words C "$name" ;;
    tag) in_words TAGS "$name" ;;
    word)
        in_words ALL "$name" ||
            { [[ $name =~ ^RUNMYSCRIPT_([A-Z0-9_]+)$ ]] && in_words ALL "${BASH_REMATCH[1],,}"; } ;;
    path) path_ok "$name" ;;
    file) file_ok "$name" ;;
    esac || echo "$s"
}

stale() { # stale DOC: "DOC:LINE: NAME" for each name of DOC the tree lacks
    spans "$1" | while IFS=$'\t' read -r where span; do
        n=$(check "$span")
        [ -z "$n" ] || echo "$where: $n"
    done | sort -t: -k2,2n -s | uniq
}

# The check itself, on a page of known names: it finds exactly the ones
# the tree lacks.
cat >"$TEST_TMP/page.md" <<'EOF'
`exec_run(spec, sink, result)` and `struct exec_spec`, `enum result_status`,
`sandbox/exec.c`, `exec.c`, `tests/unit/test-MODULE.c`, `tools__NAME`;
not `step_nowhere`, `struct no_such_thing`, `gone_table[]`, `sandbox/gone.c`,
`gone_file.c`, `tests/nowhere/`, `sandbox/exec/`, nor `no_such_fn(a,
b)` over two lines. Not checked: `runmyscript run --json`, `sys.path`, `/var/lib/x`,
`STATE/runs/RUNID`, `_meta`, `word`.
```
`fenced_name_unchecked`
```
EOF
got=$(stale "$TEST_TMP/page.md" | sed 's|^[^:]*:||' | tr '\n' ';')
is "$got" "3: step_nowhere;3: struct no_such_thing;3: gone_table[];3: sandbox/gone.c;4: gone_file.c;4: tests/nowhere/;4: sandbox/exec/;4: no_such_fn(a, b);" \
    "the check finds the names a page gives that the tree lacks, and only them"

for doc in $DOCS; do
    bad=$(stale "$doc")
    ok "$([ -z "$bad" ] && echo 0 || echo 1)" "$doc names only what the tree has"
    [ -n "$bad" ] && diag "not in the tree:" && while IFS= read -r l; do diag "  $l"; done <<<"$bad"
done

# The links between the documents: a page and a heading that exist.
anchors() { # anchors FILE: the GitHub anchor of each heading of FILE
    grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' |
        sed -E -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}
bad=$(for doc in $DOCS; do
    dir=$(dirname "$doc")
    grep -noE '\]\([^)#: ]*(#[^) ]+)?\)' "$doc" | while IFS=: read -r line link; do
        target=${link#](}; target=${target%)}
        page=${target%%#*}; anchor=
        [[ $target == *#* ]] && anchor=${target#*#}
        [ -n "$page" ] && file="$dir/$page" || file=$doc
        file=$(realpath -m --relative-to=. "$file")
        if [ ! -e "$file" ]; then echo "$doc:$line: $target (no $file)"; continue; fi
        [ -z "$anchor" ] && continue
        case $file in *.md) ;; *) continue ;; esac
        anchors "$file" | grep -qxF -- "$anchor" || echo "$doc:$line: $target (no heading #$anchor in $file)"
    done
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "every link between the documents leads to a page and a heading that exist"
[ -n "$bad" ] && diag "$bad"

# A planned name stays on the list only until the tree has it: then this
# passes, an unexpected pass that fails make check until its line goes.
if [ ${#PLANNED[@]} = 0 ]; then
    skip "no planned names in tests/docs-names.txt"
else
    missing=$(for w in "${PLANNED[@]}"; do
        unset "ALLOW[$w]"
        [ -z "$(check "$w")" ] || echo "$w;"
    done)
    TAP_TODO="the layout these names are planned for is not in the tree yet"
    ok "$([ -z "$missing" ] && echo 0 || echo 1)" "the planned names of tests/docs-names.txt are in the tree (remove their lines)"
    TAP_TODO=
    [ -n "$missing" ] && diag "not yet: $(tr '\n' ' ' <<<"$missing")"
fi

done_testing
