/* test-deps.c: the import tokenizer on tricky sources, the optional
 * packages of the commonest calls (df.plot), the PEP 723 block,
 * PEP 508 checks (and what they refuse), PEP 503 names, requires-python
 * matching, the import map, merging the sources, and what an environment
 * of the package store links (its binds; eviction of what it links). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deps.h"
#include "deps_internal.h"
#include "executor.h"
#include "tap.h"

/* The imports of src (whole paths: dotted), joined with spaces. */
static char *scan_with(const char *src, bool dotted)
{
    struct strv v = {0};
    static char buf[4096];
    buf[0] = '\0';
    if ((dotted ? deps_scan_import_paths : deps_scan_imports)(src, strlen(src), &v) < 0) {
        strv_free(&v);
        return strcpy(buf, "(error)");
    }
    for (size_t i = 0; i < v.n; i++) {
        if (i)
            strcat(buf, " ");
        strcat(buf, v.v[i]);
    }
    strv_free(&v);
    return buf;
}

static char *imports(const char *src)
{
    return scan_with(src, false);
}

static char *paths(const char *src)
{
    return scan_with(src, true);
}

/* The whole module paths, what a zygote imports ahead. */
static void test_scan_paths(void)
{
    is_str(paths("import matplotlib.pyplot as plt\n"), "matplotlib.pyplot", "import a.b as c: the whole path");
    is_str(paths("from sklearn.linear_model import LinearRegression, Ridge as R\n"),
           "sklearn.linear_model sklearn.linear_model.LinearRegression sklearn.linear_model.Ridge",
           "from a.b import c, d as e: the module, then each name under it");
    is_str(paths("import PIL.Image\nimport numpy as np, os\n"), "PIL.Image numpy os", "several, in order");
    is_str(paths("from matplotlib import (pyplot,\n    cm)\nimport k\n"), "matplotlib matplotlib.pyplot matplotlib.cm k",
           "a parenthesised from-list over lines");
    is_str(paths("from os.path import *\nimport os.path\n"), "os.path", "'*' adds nothing; each path once");
    is_str(paths("from . import x\nfrom .m import y\nimport z\n"), "z", "relative imports give nothing");
    is_str(paths("import a.\nimport b\n"), "a b", "a dotted name cut short keeps what it had");
    is_str(paths("s = 'import no.pe'\nif x: import yes.sir\n"), "yes.sir", "strings are no code; one-line blocks");
    is_str(paths("from a.b import c; import d.e\n"), "a.b a.b.c d.e", "after ';'");
    is_str(imports("import matplotlib.pyplot as plt\nfrom sklearn.linear_model import X\n"), "matplotlib sklearn",
           "the top-level scan is unchanged");
}

static void test_scan(void)
{
    is_str(imports("import numpy\n"), "numpy", "a plain import");
    is_str(imports("import a.b as c, d\n"), "a d", "import a.b as c, d: top-level names only");
    is_str(imports("from a.b import c\n"), "a", "from a.b import c");
    is_str(imports("from . import x\nfrom .mod import y\nfrom ..pkg.sub import z\nfrom ... import w\n"), "",
           "relative imports are skipped");
    is_str(imports("import os, sys\nimport os\n"), "os sys", "each name once, in order");
    is_str(imports("def f():\n    import inner\n    if x:\n        import deeper\n"), "inner deeper",
           "imports inside functions and conditionals");
    is_str(imports("try:\n    import ujson as json\nexcept ImportError:\n    import json\n"), "ujson json",
           "both arms of a try");
    is_str(imports("if x: import oneline\nelse: import other\n"), "oneline other",
           "one-line blocks after ':'");
    is_str(imports("x = 1; import semi; y = 2; from semi2 import q\n"), "semi semi2", "after ';'");
    is_str(imports("# import commented\nimport real  # import trailing\n"), "real", "comments are not code");
    is_str(imports("s = 'import single'\nt = \"from dq import x\"\n"), "", "imports inside strings");
    is_str(imports("doc = \"\"\"\nimport tripled\nfrom tri import x\n\"\"\"\nimport after\n"), "after",
           "triple-quoted strings over several lines");
    is_str(imports("d = '''\nimport a\n''' ; import b\n"), "b", "a statement after a triple-quoted string");
    is_str(imports("s = r'\\'\nimport raw_next\n"), "raw_next",
           "a raw string's backslash keeps the quote in; the unterminated string ends with its line");
    is_str(imports("s = r'a\\\\'\nimport after_raw\n"), "after_raw", "a raw string ending in a backslash pair");
    is_str(imports("s = rb'import x' + Br\"import y\" + u'import z'\nimport ok\n"), "ok", "prefixed strings");
    is_str(imports("s = f\"{x!r:>{width}} import no\"\nimport yes\n"), "yes", "f-string with conversion and spec");
    is_str(imports("s = f\"{d['import']} {f'{g(\"import q\")}'}\"\nimport nested\n"), "nested",
           "nested quotes inside f-string fields");
    is_str(imports("s = f\"{a[\"k\"]} import no\"\nimport py312\n"), "py312",
           "same-quote nesting (Python 3.12 f-strings)");
    is_str(imports("s = f'{{import literal}}'\nimport brace\n"), "brace", "doubled braces are text");
    is_str(imports("import \\\n    contd\n"), "contd", "a backslash continuation joins the next line");
    is_str(imports("x = (1,\nimport_ := 2)\nimport real\n"), "real", "a newline inside brackets is no statement");
    is_str(imports("foo(\n  1)\nimport after_paren\n"), "after_paren", "brackets close");
    is_str(imports("m = __import__('hidden')\nimportlib.import_module('dyn')\n"), "",
           "__import__ and importlib are not import statements");
    is_str(imports("obj.import_x = 1\nimportant = 2\nfrom_ = 3\nx.from_y()\n"), "",
           "names that start with import/from are names");
    is_str(imports("raise E from None\ny = (yield from g)\n"), "", "from inside raise/yield is no import");
    is_str(imports("print('x', end='') ; import after_print\n"), "after_print", "import after a call and ';'");
    is_str(imports("lambda: 0\nclass A: import in_class\n"), "in_class", "after a class header");
    is_str(imports("x: int = 3\nimport after_annot\n"), "after_annot", "annotations");
    is_str(imports("if (n := 10) > 5: import walrus\n"), "walrus", "':=' is not a block colon, ':' is");
    is_str(imports("d = {'a': 1}\nimport after_dict\n"), "after_dict", "dict colons");
    is_str(imports("\xef\xbb\xbfimport bom\n"), "bom", "a byte order mark");
    is_str(imports("import café\nimport ok2\n"), "ok2", "non-ASCII module names are no distribution");
    is_str(imports("s = 'unterminated\nimport next_line\n"), "next_line", "an unterminated string ends at the line");
    is_str(imports("import a.b.c as d, e.f\nfrom g.h import (i,\n  j)\nimport k\n"), "a e g k",
           "a parenthesised from-list");
    is_str(imports("x = 1.5e-3; import num\n"), "num", "numbers with exponents");
    is_str(imports("import\n"), "", "a bare import");
    is_str(imports("s = '''never closed\nimport inside\n"), "", "an unterminated triple-quoted string");
    is_str(imports("if x:\n\timport tabbed\r\nimport crlf\r\n"), "tabbed crlf", "tabs and CRLF");

    /* The limit. */
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    for (int i = 0; i <= DEPS_MAX_IMPORTS; i++)
        discard(dbuf_printf(&b, "import m%d\n", i));
    struct strv v = {0};
    is_int(deps_scan_imports(b.data, b.len, &v), -E2BIG, "more than DEPS_MAX_IMPORTS names is -E2BIG");
    strv_free(&v);
    dbuf_free(&b);
}

static void test_meta(void)
{
    char why[512] = "";
    struct deps_meta m;
    const char *src = "#!/usr/bin/env python3\n"
                      "# /// script\n"
                      "# requires-python = \">=3.8\"\n"
                      "# dependencies = [\n"
                      "#   \"requests<3\",  # a comment\n"
                      "#   'rich',\n"
                      "# ]\n"
                      "# [tool.x]\n"
                      "# dependencies = [\"not-this\"]\n"
                      "# ///\n"
                      "import requests\n";
    is_int(deps_read_meta(src, strlen(src), &m, why, sizeof why), 0, "a PEP 723 block reads");
    ok(m.present && m.has_dependencies, "present, with dependencies");
    is_int((long long)m.dependencies.n, 2, "two dependencies (a table's keys are not the script's)");
    if (m.dependencies.n == 2) {
        is_str(m.dependencies.v[0], "requests<3", "first");
        is_str(m.dependencies.v[1], "rich", "second (literal string)");
    }
    is_str(m.requires_python, ">=3.8", "requires-python");
    deps_meta_free(&m);

    const char *none = "# // script\n#/// script\nimport x\n";
    is_int(deps_read_meta(none, strlen(none), &m, why, sizeof why), 0, "no block");
    ok(!m.present, "not present");
    deps_meta_free(&m);

    const char *two = "# /// script\n# dependencies = []\n# ///\n# /// script\n# dependencies = []\n# ///\n";
    is_int(deps_read_meta(two, strlen(two), &m, why, sizeof why), -EINVAL, "two script blocks are an error");
    deps_meta_free(&m);
    const char *open_ = "# /// script\n# dependencies = []\nimport x\n";
    is_int(deps_read_meta(open_, strlen(open_), &m, why, sizeof why), -EINVAL, "an unclosed block is an error");
    ok(strstr(why, "closing") != NULL, "saying so: %s", why);
    deps_meta_free(&m);
    const char *bad = "# /// script\n# dependencies = \"requests\"\n# ///\n";
    is_int(deps_read_meta(bad, strlen(bad), &m, why, sizeof why), -EINVAL, "dependencies that is not an array");
    deps_meta_free(&m);
    const char *other = "# /// pyproject\n# x = 1\n# ///\n\n# /// script\n# dependencies = [\"a\",]\n# ///\n";
    is_int(deps_read_meta(other, strlen(other), &m, why, sizeof why), 0, "another block type is skipped");
    ok(m.present && m.dependencies.n == 1, "and the script block still found, trailing comma fine");
    deps_meta_free(&m);
    const char *last = "# /// script\n# dependencies = [\"a\"]\n# ///\n# more = 1\n# ///\nx = 1\n";
    /* PEP 723: the last "# ///" of the comment lines closes the block, so
     * the first one is content (and not TOML). */
    is_int(deps_read_meta(last, strlen(last), &m, why, sizeof why), -EINVAL, "the last '# ///' closes the block");
    deps_meta_free(&m);
}

static void test_check(void)
{
    char why[600];
    char *name = NULL, *canon = NULL;
    static const struct {
        const char *in, *name, *canon;
    } good[] = {
        {"requests", "requests", "requests"},
        {"Pillow>=9", "pillow", "pillow>=9"},
        {"  PyYAML == 6.0.1 ", "pyyaml", "pyyaml==6.0.1"},
        {"rms_gamma.dist", "rms-gamma-dist", "rms-gamma-dist"},
        {"a__b--c", "a-b-c", "a-b-c"},
        {"requests[socks, Security]>=2.0,<3", "requests", "requests[security,socks]>=2.0,<3"},
        {"foo (>=1.0, <2)", "foo", "foo>=1.0,<2"},
        {"numpy==1.26.*", "numpy", "numpy==1.26.*"},
        {"x~=1.4.2", "x", "x~=1.4.2"},
        {"x===weird", "x", "x===weird"},
        {"tomli; python_version < \"3.11\"", "tomli", "tomli; python_version < \"3.11\""},
        {"pywin32>=300 ; sys_platform=='win32' and (platform_machine == 'x86' or extra == 'a')", "pywin32",
         "pywin32>=300; sys_platform == 'win32' and (platform_machine == 'x86' or extra == 'a')"},
        {"a; 'linux' in sys_platform", "a", "a; 'linux' in sys_platform"},
        {"a; os_name not  in 'nt'", "a", "a; os_name not in 'nt'"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
        int rc = deps_check_requirement(good[i].in, false, &name, &canon, why, sizeof why);
        is_int(rc, 0, "accepted: %s", good[i].in);
        if (rc == 0) {
            is_str(name, good[i].name, "  name of %s", good[i].in);
            is_str(canon, good[i].canon, "  canonical %s", good[i].in);
        } else {
            diag("%s", why);
        }
        free(name);
        free(canon);
        name = canon = NULL;
    }
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"--index-url=http://127.0.0.1/simple", "installer options"},
        {"-e git+https://127.0.0.1/x.git", "installer options"},
        {"-r other.txt", "installer options"},
        {"--extra-index-url http://127.0.0.1/", "installer options"},
        {"./local/pkg", "local paths"},
        {"/abs/path/pkg.whl", "local paths"},
        {"~/pkg", "local paths"},
        {"pkg/sub", "local paths"},
        {"https://127.0.0.1/x.whl", "URLs"},
        {"file:///tmp/x.whl", "URLs"},
        {"x @ https://127.0.0.1/x.whl", "direct references"},
        {"x[extra] @ file:///tmp/x.whl", "direct references"},
        {"", "empty"},
        {"requests\n--index-url x", "control character"},
        {"requests >= ", "without a version"},
        {"requests foo", "version operator"},
        {"requests==1.0 extra", "unexpected text"},
        {"requests; bogus_var == '1'", "unknown marker variable"},
        {"requests; python_version", "comparison"},
        {"_under", "project name"},
        {"req[", "extra"},
        {"x; (python_version > '3'", "')'"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        why[0] = '\0';
        int rc = deps_check_requirement(bad[i].in, false, &name, &canon, why, sizeof why);
        is_int(rc, -EINVAL, "refused: '%s'", bad[i].in);
        ok(strstr(why, bad[i].why) != NULL, "  because: %s", why);
        if (rc == 0) {
            free(name);
            free(canon);
        }
        name = canon = NULL;
    }
    char longspec[EXEC_REQUIREMENT_MAX + 10];
    memset(longspec, 'a', sizeof longspec - 1);
    longspec[sizeof longspec - 1] = '\0';
    is_int(deps_check_requirement(longspec, false, NULL, NULL, why, sizeof why), -EINVAL,
           "a requirement past EXEC_REQUIREMENT_MAX is refused");
    /* Under the ceiling as written, over it canonically (blanks around each
     * marker operator): refused too, and a canonical form is always
     * accepted again (tests/fuzz found this). */
    char grow[EXEC_REQUIREMENT_MAX + 1] = "x;python_version>'1'";
    while (strlen(grow) + 15 <= EXEC_REQUIREMENT_MAX)
        strcat(grow, "and'1'<'2'");
    ok(strlen(grow) <= EXEC_REQUIREMENT_MAX, "a marker of %zu bytes", strlen(grow));
    is_int(deps_check_requirement(grow, false, &name, &canon, why, sizeof why), -EINVAL,
           "whose canonical spelling is past EXEC_REQUIREMENT_MAX: refused (%s)", why);
    ok(name == NULL && canon == NULL, "and nothing returned");
    strcpy(grow, "x;python_version>'1'and'1'<'2'and'1'<'2'and'1'<'2'");
    is_int(deps_check_requirement(grow, false, &name, &canon, why, sizeof why), 0, "a shorter one is fine");
    char *name2 = NULL, *canon2 = NULL;
    is_int(deps_check_requirement(canon, false, &name2, &canon2, why, sizeof why), 0, "its canonical spelling too");
    is_str(canon2, canon, "and is its own canonical spelling");
    free(name);
    free(canon);
    free(name2);
    free(canon2);
    name = canon = NULL;
    is_int(deps_check_requirement("x @ https://127.0.0.1/x.whl", true, &name, &canon, why, sizeof why), 0,
           "a direct reference when allowed");
    is_str(canon, "x @ https://127.0.0.1/x.whl", "  its canonical form");
    free(name);
    free(canon);
    is_int(deps_check_requirement("x @ https://127.0.0.1/x.whl; python_version>'3'", true, NULL, NULL, why,
                                  sizeof why),
           -EINVAL, "a marker glued to a URL is refused (PEP 508)");
    is_int(deps_check_requirement("x @ notaurl", true, NULL, NULL, why, sizeof why), -EINVAL,
           "a direct reference needs a URL");
}

static void test_normalize(void)
{
    static const struct {
        const char *in, *out;
    } v[] = {
        {"Pillow", "pillow"}, {"python_dateutil", "python-dateutil"}, {"Foo.Bar--baz__Q", "foo-bar-baz-q"},
        {"a-_.-b", "a-b"},    {"zope.interface", "zope-interface"},  {"x", "x"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
        char *n = deps_normalize_name(v[i].in, strlen(v[i].in));
        is_str(n, v[i].out, "PEP 503: %s", v[i].in);
        free(n);
    }
}

static void test_versions(void)
{
    static const struct {
        const char *have, *spec;
        int want;
    } v[] = {
        {"3.11.2", ">=3.8", 1},        {"3.11.2", ">=3.12", 0},       {"3.11.2", "<3.11", 0},
        {"3.11.2", ">=3.8, <4", 1},    {"3.11.2", "==3.11.*", 1},     {"3.11.2", "==3.10.*", 0},
        {"3.11.2", "!=3.11.*", 0},     {"3.11.2", "~=3.10", 1},       {"3.11.2", "~=3.11.3", 0},
        {"3.11.2", "~=3.11.0", 1},     {"3.11.2", "==3.11", 0},       {"3.11.0", "==3.11", 1},
        {"3.11.2", ">3.11", 1},        {"3.11.2", "<=3.11.2", 1},     {"3.11.2", "===3.11.2", 1},
        {"3.11.2", ">=3.8,<3.9", 0},   {"3.11.2", "> 3.7 ,!= 3.9.*", 1},
        {"3.11.2", "", -EINVAL},       {"3.11.2", "3.8", -EINVAL},    {"3.11.2", ">=x", -EINVAL},
        {"3.11.2", "~=3", -EINVAL},    {"3.11.2", ">=3.*", -EINVAL},
    };
    for (size_t i = 0; i < ARRAY_SIZE(v); i++)
        is_int(deps_version_satisfies(v[i].have, v[i].spec), v[i].want, "%s against '%s'", v[i].have, v[i].spec);
}

/* Writes text as DIR/import-names.tsv. */
static void write_map(const char *dir, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/import-names.tsv", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_map(const char *srcdir, const char *tmp)
{
    char path[4096], why[512] = "";
    struct deps_map m;
    /* Built in (no data_dir), and the shipped file named by data_dir: the
     * same map. */
    int rc = deps_map_load(NULL, &m, why, sizeof why);
    is_int(rc, 0, "the built-in import map loads: %s", why);
    ok(m.n >= 150, "it has at least 150 mappings (%zu)", m.n);
    size_t builtin_n = m.n;
    deps_map_free(&m);
    snprintf(path, sizeof path, "%s/data", srcdir);
    rc = deps_map_load(path, &m, why, sizeof why);
    is_int(rc, 0, "the shipped import map loads from data_dir: %s", why);
    is_int((int)m.n, (int)builtin_n, "the same mappings as the built-in one");
    static const struct {
        const char *imp, *dist;
    } v[] = {
        {"PIL", "pillow"},          {"cv2", "opencv-python"},       {"sklearn", "scikit-learn"},
        {"yaml", "PyYAML"},         {"bs4", "beautifulsoup4"},      {"skimage", "scikit-image"},
        {"dateutil", "python-dateutil"}, {"dotenv", "python-dotenv"}, {"Crypto", "pycryptodome"},
        {"docx", "python-docx"},    {"pptx", "python-pptx"},        {"fitz", "PyMuPDF"},
        {"jwt", "PyJWT"},           {"serial", "pyserial"},         {"numpy", "numpy"},
        {"rms_gamma", "rms_gamma"}, {"AAAA", "AAAA"},               {"zzzz", "zzzz"},
    };
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(v); i++)
        is_str(deps_map_lookup(&m, v[i].imp), v[i].dist, "map: %s", v[i].imp);
    deps_map_free(&m);
    /* data_dir's file may be a link to the administrator's copy. */
    char linked[4096], target[4200], link[4200];
    snprintf(linked, sizeof linked, "%s/linked", tmp);
    mkdir(linked, 0755);
    snprintf(link, sizeof link, "%s/import-names.tsv", linked);
    snprintf(target, sizeof target, "%s/data/import-names.tsv", srcdir);
    ok(symlink(target, link) == 0, "a data_dir whose import-names.tsv is a symlink");
    is_int(deps_map_load(linked, &m, why, sizeof why), 0, "loads through the link: %s", why);
    is_int((int)m.n, (int)builtin_n, "the whole map");
    deps_map_free(&m);
    unlink(path);
    rmdir(linked);
    is_int(deps_map_load("", &m, why, sizeof why), 0, "an empty data_dir is the built-in map");
    is_int((int)m.n, (int)builtin_n, "all of it");
    deps_map_free(&m);

    /* exec_requirement_for: the executor's face of the map. */
    char dist[64];
    is_int(exec_requirement_for(NULL, "sklearn", dist, sizeof dist), 1, "exec_requirement_for: sklearn is mapped");
    is_str(dist, "scikit-learn", "to scikit-learn");
    is_int(exec_requirement_for("", "PIL", dist, sizeof dist), 1, "an empty data_dir: the built-in map");
    is_str(dist, "pillow", "PIL to pillow");
    is_int(exec_requirement_for(NULL, "nosuchmodxyz", dist, sizeof dist), 0, "a name the map lacks: 0");
    is_str(dist, "", "and no distribution");
    is_int(exec_requirement_for(NULL, "sklearn", dist, 5), -E2BIG, "a distribution that does not fit: -E2BIG");
    snprintf(path, sizeof path, "%s/nowhere", tmp);
    is_int(exec_requirement_for(path, "sklearn", dist, sizeof dist), -ENOENT, "a data_dir without the map: -ENOENT");

    /* A missing or broken map is an error, never a silent guess. */
    snprintf(path, sizeof path, "%s/nowhere", tmp);
    is_int(deps_map_load(path, &m, why, sizeof why), -ENOENT, "a data_dir without the map is refused");
    ok(strstr(why, "nowhere/import-names.tsv") != NULL, "naming the file: %s", why);
    deps_map_free(&m);
    write_map(tmp, "# header\nb\tB\na\tA\n");
    is_int(deps_map_load(tmp, &m, why, sizeof why), -EINVAL, "an unsorted map is refused");
    ok(strstr(why, "import-names.tsv:3") != NULL, "naming the line: %s", why);
    deps_map_free(&m);
    write_map(tmp, "a b\n");
    is_int(deps_map_load(tmp, &m, why, sizeof why), -EINVAL, "a line without a tab is refused");
    deps_map_free(&m);
    snprintf(path, sizeof path, "%s/import-names.tsv", tmp);
    unlink(path);
}

/* The optional packages a call needs that no import names. */
static char *idioms(const char *src, const char *have_list)
{
    struct strv have = {0}, out = {0};
    static char buf[1024];
    buf[0] = '\0';
    char copy[256];
    snprintf(copy, sizeof copy, "%s", have_list);
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        discard(strv_push(&have, w, strlen(w)));
    if (deps_scan_idioms(src, strlen(src), &have, &out) < 0)
        strcpy(buf, "(error)");
    for (size_t i = 0; i < out.n; i++) {
        if (i)
            strcat(buf, " ");
        strcat(buf, out.v[i]);
    }
    strv_free(&have);
    strv_free(&out);
    return buf;
}

static void test_idioms(void)
{
    is_str(idioms("df = pd.DataFrame({'a': [1]})\ndf.plot(kind='bar')\n", "pandas"), "matplotlib",
           "df.plot() with pandas imported needs matplotlib");
    is_str(idioms("df['a'].plot.hist()\ndf.hist()\n", "pandas"), "matplotlib", "the plot accessor, hist: once");
    is_str(idioms("x = pd.read_excel('a.xlsx')\nx.to_parquet('a.parquet')\n", "pandas"), "openpyxl pyarrow",
           "read_excel needs openpyxl, to_parquet pyarrow, in order");
    is_str(idioms("obj.plot()\n", "numpy"), "", "a .plot() without pandas is anyone's: nothing");
    is_str(idioms("s = 'df.plot()'  # df.to_excel()\n", "pandas"), "", "strings and comments are no calls");
    is_str(idioms("plot(1)\nto_excel = 2\n", "pandas"), "", "a bare name is no call of pandas'");
    is_str(idioms("df.style.format('{:.2f}')\n", "pandas"), "jinja2", "df.style needs jinja2");
}

/* The hint for a script that failed for want of an optional package. */
static char *hint(const char *log)
{
    static char buf[512];
    char *h = deps_hint_optional(log, strlen(log));
    snprintf(buf, sizeof buf, "%s", h ? h : "(none)");
    free(h);
    return buf;
}

static void test_hint(void)
{
    is_str(hint("Traceback (most recent call last):\n  File \"/job/script.py\", line 3, in <module>\n"
                "ImportError: Missing optional dependency 'openpyxl'.  Use pip or conda to install openpyxl.\n"),
           "the optional package openpyxl is missing: add openpyxl to requirements (or import openpyxl in the script)",
           "pandas' missing optional dependency: named, with what to change");
    is_str(hint("ImportError: matplotlib is required for plotting when the default backend \"matplotlib\" is "
                "selected.\n"),
           "the optional package matplotlib is missing: add matplotlib to requirements (or import matplotlib in the "
           "script)",
           "pandas' plotting without matplotlib");
    is_str(hint("ImportError: Missing optional dependency 'lxml.etree'.  Use pip or conda to install lxml.\n"),
           "the optional package lxml is missing: add lxml to requirements (or import lxml in the script)",
           "a dotted module: its package");
    is_str(hint("ImportError: matplotlib is required for plotting ...\nImportError: Missing optional dependency "
                "'pyarrow'.\n"),
           "the optional package pyarrow is missing: add pyarrow to requirements (or import pyarrow in the script)",
           "the last one counts");
    is_str(hint("ZeroDivisionError: division by zero\n"), "(none)", "another error: no hint");
    is_str(hint("ImportError: Missing optional dependency ''.\n"), "(none)", "no name: no hint");
    ok(deps_hint_optional(NULL, 0) == NULL, "no log: no hint");
}

/* A fake interpreter: its stdlib list is all that deps_detect reads. */
static void fake_info(struct deps_python *info)
{
    static const char *const std[] = {"__future__", "json", "os", "sys"};
    memset(info, 0, sizeof *info);
    info->path = strdup("/usr/bin/python3");
    info->version = strdup("3.11.2");
    info->platform = strdup("linux-x86_64");
    for (size_t i = 0; i < ARRAY_SIZE(std); i++)
        discard(strv_push(&info->stdlib, std[i], strlen(std[i])));
}

static char *set_str(const struct deps_set *s)
{
    static char buf[2048];
    buf[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        static const char *const src[] = {"explicit", "script", "import"};
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "%s%s(%s)", i ? " " : "", s->v[i].spec, src[s->v[i].source]);
    }
    return buf;
}

static void test_merge(const char *srcdir, const char *tmp)
{
    struct deps_python info;
    fake_info(&info);
    char data[4096], why[600] = "";
    snprintf(data, sizeof data, "%s/data", srcdir);
    struct exec_deps_config cfg = {.data_dir = data, .only_binary = true};
    const char *code = "# /// script\n"
                       "# dependencies = [\"pillow>=9\", \"rms-beta\"]\n"
                       "# ///\n"
                       "import PIL, yaml, os, json, helpers, pkgdir, rms_beta, rms_alpha\n"
                       "from __future__ import annotations\n";
    const char *explicit_reqs[] = {"Pillow==9.4.0", "rms_alpha"};
    struct deps_set set = {0};
    int rc = deps_declared(&cfg, explicit_reqs, 2, code, strlen(code), &info, &set, why, sizeof why);
    is_int(rc, 0, "declared: explicit + PEP 723 (%s)", why);
    is_str(set_str(&set), "pillow==9.4.0(explicit) rms-alpha(explicit) rms-beta(script)",
           "explicit wins over PEP 723 for pillow");
    /* A workspace with a helpers.py and a package directory. */
    char ws[4096], p[4200];
    snprintf(ws, sizeof ws, "%s/ws", tmp);
    mkdir(ws, 0755);
    snprintf(p, sizeof p, "%s/helpers.py", ws);
    FILE *f = fopen(p, "w");
    fclose(f);
    snprintf(p, sizeof p, "%s/pkgdir", ws);
    mkdir(p, 0755);
    const char *local[] = {ws};
    rc = deps_detect(&cfg, code, strlen(code), &info, local, 1, NULL, &set, why, sizeof why);
    is_int(rc, 0, "detect (%s)", why);
    is_str(set_str(&set), "pillow==9.4.0(explicit) rms-alpha(explicit) rms-beta(script) pyyaml(import)",
           "detection adds only what is missing: stdlib, workspace modules and declared ones are dropped");
    deps_set_free(&set);

    /* A cell of a kernel that holds pandas: its df.plot() needs matplotlib
     * although the cell imports nothing. */
    const char *kernel_reqs[] = {"pandas"};
    const char *cell = "df.plot()\n";
    rc = deps_declared(&cfg, kernel_reqs, 1, cell, strlen(cell), &info, &set, why, sizeof why);
    if (rc == 0)
        rc = deps_detect(&cfg, cell, strlen(cell), &info, NULL, 0, NULL, &set, why, sizeof why);
    is_int(rc, 0, "detect a cell's call (%s)", why);
    is_str(set_str(&set), "pandas(explicit) matplotlib(import)", "df.plot() in a kernel of pandas adds matplotlib");
    deps_set_free(&set);

    const char *explicit_bad[] = {"ok", "--index-url=x"};
    rc = deps_declared(&cfg, explicit_bad, 2, "", 0, &info, &set, why, sizeof why);
    is_int(rc, -EINVAL, "an option among the explicit requirements refuses the call");
    ok(strstr(why, "installer options") != NULL, "  %s", why);
    deps_set_free(&set);
    const char *smuggle = "# /// script\n# dependencies = [\"x @ https://127.0.0.1/x.whl\"]\n# ///\n";
    rc = deps_declared(&cfg, NULL, 0, smuggle, strlen(smuggle), &info, &set, why, sizeof why);
    is_int(rc, -EINVAL, "a URL in the PEP 723 block is refused");
    ok(strstr(why, "PEP 723") != NULL, "  naming the block: %s", why);
    deps_set_free(&set);
    const char *newer = "# /// script\n# requires-python = \">=3.99\"\n# ///\n";
    rc = deps_declared(&cfg, NULL, 0, newer, strlen(newer), &info, &set, why, sizeof why);
    is_int(rc, -EINVAL, "requires-python that the interpreter does not meet");
    ok(strstr(why, ">=3.99") && strstr(why, "3.11.2"), "  a clear error: %s", why);
    deps_set_free(&set);

    /* A detected import that a declared distribution provides. */
    snprintf(p, sizeof p, "%s/env/lib/python3.11/site-packages/rms_gamma", tmp);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    ok(system(cmd) == 0, "a fake environment");
    const char *gamma = "import rms_gamma, other\n";
    const char *g_reqs[] = {"rms-gamma-dist"};
    rc = deps_declared(&cfg, g_reqs, 1, gamma, strlen(gamma), &info, &set, why, sizeof why);
    if (rc == 0)
        rc = deps_detect(&cfg, gamma, strlen(gamma), &info, NULL, 0, NULL, &set, why, sizeof why);
    is_str(set_str(&set), "rms-gamma-dist(explicit) rms-gamma(import) other(import)", "before the declared install");
    snprintf(p, sizeof p, "%s/env", tmp);
    deps_drop_provided(&set, &info, p);
    is_str(set_str(&set), "rms-gamma-dist(explicit) other(import)",
           "an import the declared environment provides is dropped");
    deps_set_free(&set);
    deps_python_free(&info);
}

/* A store entry and an environment whose manifest names it (what
 * deps__store_build and build_env write), made by hand. */
static void test_store_links(const char *tmp)
{
    char cmd[8192], env[512], entry[512], want[600];
    const char *hash = "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12";
    snprintf(entry, sizeof entry, "%s/st/store/py3.11/%s", tmp, hash);
    snprintf(env, sizeof env, "%s/st/envs/0123456789abcdef0123456789abcdef", tmp);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/site' '%s' && printf 'runmyscript-wheel 1\nname x\nversion 1\nbytes 100\n' >'%s/"
             "runmyscript-wheel.txt' && printf 'runmyscript-env 1\nbytes 0\nwheel py3.11/%s\n"
             "wheel py3.11/../../../etc\nwheel /etc\ncopied 0\nstore %s/st/store\n' >'%s/runmyscript-env.txt'",
             entry, env, entry, hash, tmp, env);
    ok(system(cmd) == 0, "a store entry and an environment that links it");
    struct strv links = {0};
    is_int(deps_env_links(env, &links), 0, "deps_env_links reads the manifest");
    snprintf(want, sizeof want, "%s/st/store/py3.11/%s", tmp, hash);
    is_int((int)links.n, 1, "one entry: a wheel line that names anything but pyX.Y/HASH is none");
    is_str(links.n ? links.v[0] : "", want, "at its host path, under the manifest's store");
    strv_free(&links);
    char st[512];
    snprintf(st, sizeof st, "%s/st", tmp);
    struct deps__store_entry e = {.py = "py3.11", .bytes = 100};
    memcpy(e.hash, hash, 65);
    /* An eviction pass that listed the manifests before this environment
     * was published would find the entry unlinked: asked again under the
     * entry's lock, the store keeps it. */
    is_int(deps__store_remove(st, &e), -EBUSY, "an entry an environment links is not evicted");
    ok(access(entry, F_OK) == 0, "it is still there");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", env);
    ok(system(cmd) == 0, "the environment goes");
    is_int(deps__store_remove(st, &e), 0, "then the entry may go");
    ok(access(entry, F_OK) < 0, "and it is gone");
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && printf 'runmyscript-env 1\nbytes 0\nwheel py3.11/%s\n' >'%s/"
             "runmyscript-env.txt'", env, hash, env);
    ok(system(cmd) == 0, "an environment of hard links (no store line)");
    is_int(deps_env_links(env, &links), 0, "deps_env_links reads it");
    is_int((int)links.n, 0, "and it needs no bind");
    strv_free(&links);
    snprintf(cmd, sizeof cmd, "%s/st/envs/base", tmp);
    ok(mkdir(cmd, 0755) == 0 && deps_env_links(cmd, &links) == 0 && links.n == 0,
       "the base environment (no manifest) needs none either");
}

/* Whether a script ends in an expression a notebook shows: every kind
 * of last statement, and the false negatives it must not have. */
static void test_tail(void)
{
    static const struct {
        const char *code;
        bool expr;
    } cases[] = {
        {"x = 1\nx + 1\n", true},
        {"x + 1", true},
        {"df.describe()\n# a comment\n\n", true},
        {"[1, 2,\n 3]\n", true},
        {"f(a=1,\n  b=2)\n", true},
        {"a == b\n", true},
        {"a <= b", true},
        {"a != b", true},
        {"(y := 5)", true},
        {"x = 1; x", true},
        {"'''doc'''\nvalue", true},
        {"s = '''\nx\n'''", false},
        {"x = 1\n", false},
        {"x += 1", false},
        {"x: int = 1", false},
        {"a, b = 1, 2", false},
        {"print(1)\n", false},
        {"print(1) + 1", true},
        {"print (1)", false},
        {"def f():\n    return 1\n", false},
        {"if x:\n    y\n", false},
        {"for i in r: i", false},
        {"import os", false},
        {"from os import path", false},
        {"@dec\ndef f(): pass", false},
        {"class C: pass", false},
        {"x = 1; y = 2", false},
        {"if x: a; b", false},
        {"pass", false},
        {"", false},
        {"# only a comment\n", false},
        {"\xef\xbb\xbfx + 1", true},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        ok(deps_scan_ends_in_expression(cases[i].code, strlen(cases[i].code)) == cases[i].expr,
           "ends in an expression: %s for %s", cases[i].expr ? "yes" : "no", cases[i].code);
}

int main(void)
{
    test_scan_paths();
    const char *srcdir = getenv("top_srcdir");
    if (!srcdir)
        srcdir = ".";
    char tmp[] = "/tmp/rms-test-deps.XXXXXX";
    if (!mkdtemp(tmp))
        return 1;
    test_scan();
    test_idioms();
    test_hint();
    test_tail();
    test_meta();
    test_check();
    test_normalize();
    test_versions();
    test_map(srcdir, tmp);
    test_merge(srcdir, tmp);
    test_store_links(tmp);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    discard(system(cmd));
    return tap_done();
}
