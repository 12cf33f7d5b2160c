/* tools_prompt.c: the MCP prompts (prompts/list, prompts/get): templates
 * that tell a model how to use the tools well. Each is one row of a table
 * (name, title, description, its arguments, the function that writes its
 * messages); the arguments are checked from the rows before a function
 * runs. The test program adds the conformance suite's fixture prompts
 * (tools_fixture.c) when test_fixture_tools is on. */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The steps a script for run_code takes, shared by the prompts. */
static const char contract[] =
    "How the run_code tool runs a script:\n"
    "- It is one self-contained Python 3 file, run as a program (not a REPL): print() what the reader must "
    "see; a bare expression on the last line also comes back as the result's value.\n"
    "- Input: pass data as the tool's input argument; the script reads it from the file at "
    "os.environ['SCRIPT_INPUT'] (the same bytes are on stdin).\n"
    "- Results: write every file the user should get (a chart, a CSV, a report) into the folder "
    "os.environ['SCRIPT_OUTPUT']; each comes back as an artifact with a download link. A file written anywhere "
    "else stays in the workspace and is not returned. With matplotlib, call savefig there (a figure left open "
    "is saved too).\n"
    "- Packages: the standard library is there; list third-party packages in requirements (['pandas', "
    "'matplotlib']), or simply import them: known imports are installed for you. There is no network while "
    "the script runs, so download nothing from inside it.\n"
    "- Remote data: pass files=[{\"url\": ..., \"mountPath\": \"data.csv\"}] (or call mount_file first); the "
    "script reads it as mounts/data.csv, relative to its working directory.\n"
    "- Work in steps: the working directory is a workspace that persists between calls%s; files a call wrote "
    "are there for the next, list_dir and preview_file show them, and where tools/list has run_cell, it keeps Python variables "
    "alive between calls (load a DataFrame once, then explore it cell by cell).\n"
    "- A run that fails comes back with isError, its status and the whole log (the traceback): read it, fix "
    "the script and call again. A run stopped at a limit (time, memory, output) names the limit.\n";

/* How the workspace is named from call to call, per revision. */
static const char *continuity(const char *version)
{
    return version && !strcmp(version, MCP_REVISION_2026)
               ? " (pass the workspace handle that the first call returned in structuredContent.workspace)"
               : " of this session";
}

static json_object *message(const char *role, json_object *content)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string(role));
    json_object_object_add(m, "content", content);
    return m;
}

static json_object *text_content(const char *s)
{
    return tools__text_block(s, strlen(s));
}

/* Appends to messages a user message: the formatted text, then how
 * run_code runs a script for revision version. 0 or -ENOMEM. */
static int add_with_contract(json_object *messages, const char *version, const char *fmt, ...) printf_like(3, 4);
static int add_with_contract(json_object *messages, const char *version, const char *fmt, ...)
{
    va_list ap;
    cleanup_free char *body = NULL, *rules = NULL, *all = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&body, fmt, ap);
    va_end(ap);
    if (n < 0 || asprintf(&rules, contract, continuity(version)) < 0 ||
        asprintf(&all, "%s\n\n%s", body, rules) < 0)
        return -ENOMEM;
    json_object_array_add(messages, message("user", text_content(all)));
    return 0;
}

/* A prompt argument's value (borrowed), NULL when absent. */
static const char *arg_of(json_object *args, const char *name)
{
    json_object *v = NULL;
    if (!args || !json_object_object_get_ex(args, name, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static int python_programmer(const char *version, json_object *args, json_object *messages)
{
    const char *task = arg_of(args, "task"), *files = arg_of(args, "mounted_files");
    const char *reqs = arg_of(args, "requirements");
    bool mounted = files && *files, wanted = reqs && *reqs;
    return add_with_contract(
        messages, version,
        "You are a careful Python programmer with a sandbox: the run_code tool of this server runs the scripts "
        "you write and gives back their log and the files they wrote. Write one script that does the task below, "
        "call run_code with it, and answer from what it printed and the files it returned (link them). If it "
        "fails, fix it and run it again.\n\nTask: %s%s%s%s%s",
        task, mounted ? "\n\nThese files are already in the workspace (mounted earlier); read them by these "
                        "paths, relative to the working directory, without fetching them again: "
                      : "",
        mounted ? files : "",
        wanted ? "\n\nUse these packages, and pass them in run_code's requirements: " : "", wanted ? reqs : "");
}

static int analyze_file(const char *version, json_object *args, json_object *messages)
{
    const char *url = arg_of(args, "url"), *question = arg_of(args, "question");
    return add_with_contract(
        messages, version,
        "Analyze a data file with the tools of this server.\n"
        "1. Call run_code with files=[{\"url\": \"%s\", \"mountPath\": \"data\"}] and a script that loads "
        "mounts/data (guess its format from its first bytes: CSV, JSON, Excel, Parquet), prints its shape, "
        "columns, types and the first rows, and counts the missing values.\n"
        "2. Then, in the same workspace (the file is not downloaded again), answer: %s\n"
        "Save each chart as a PNG and each table you build as a CSV into SCRIPT_OUTPUT, print the numbers your "
        "answer rests on, and link the artifacts in your answer.",
        url, question && *question ? question : "what does this data say? Summarize it, with a chart of what "
                                                "matters most.");
}

static const struct tools_prompt_def prompts[] = {
    {"python_programmer", "Write and run a Python script",
     "Tells the model how to write a script for run_code (input in SCRIPT_INPUT, results as files in "
     "SCRIPT_OUTPUT, requirements, files, run_cell for work in steps) and asks it to do a task with one.",
     {{"task", "What the script should do", true},
      {"mounted_files", "Files already mounted in the workspace, comma-separated paths (mounts/data.csv)", false},
      {"requirements", "Packages the script should use, comma-separated (pandas, matplotlib)", false}},
     python_programmer},
    {"analyze_file", "Analyze a data file",
     "Mounts a data file from its URL, looks at its shape and columns, then answers a question about it with "
     "numbers and charts.",
     {{"url", "The file's http(s) URL", true},
      {"question", "What to find out (default: a summary with a chart)", false}},
     analyze_file},
};

static const struct tools_prompt_def *find_prompt(const struct cfg *cfg, const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(prompts); i++)
        if (!strcmp(prompts[i].name, name))
            return &prompts[i];
    for (size_t i = 0; cfg->test_fixture_tools && i < tools__n_fixture_prompts; i++)
        if (tools__fixture_prompts[i].name && !strcmp(tools__fixture_prompts[i].name, name))
            return &tools__fixture_prompts[i];
    return NULL;
}

bool tools_prompt_has_arg(const struct cfg *cfg, const char *name, const char *arg)
{
    const struct tools_prompt_def *p = find_prompt(cfg, name);
    for (size_t i = 0; p && i < ARRAY_SIZE(p->args) && p->args[i].name; i++)
        if (!strcmp(p->args[i].name, arg))
            return true;
    return false;
}

static json_object *prompt_json(const struct tools_prompt_def *p)
{
    json_object *o = json_object_new_object(), *args = json_object_new_array();
    json_object_object_add(o, "name", json_object_new_string(p->name));
    if (p->title)
        json_object_object_add(o, "title", json_object_new_string(p->title));
    json_object_object_add(o, "description", json_object_new_string(p->description));
    for (size_t i = 0; i < ARRAY_SIZE(p->args) && p->args[i].name; i++) {
        json_object *a = json_object_new_object();
        json_object_object_add(a, "name", json_object_new_string(p->args[i].name));
        json_object_object_add(a, "description", json_object_new_string(p->args[i].description));
        json_object_object_add(a, "required", json_object_new_boolean(p->args[i].required));
        json_object_array_add(args, a);
    }
    json_object_object_add(o, "arguments", args);
    return o;
}

json_object *tools_prompts_list(const struct cfg *cfg)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < ARRAY_SIZE(prompts); i++)
        json_object_array_add(arr, prompt_json(&prompts[i]));
    for (size_t i = 0; cfg->test_fixture_tools && i < tools__n_fixture_prompts; i++)
        if (tools__fixture_prompts[i].name)
            json_object_array_add(arr, prompt_json(&tools__fixture_prompts[i]));
    return arr;
}

int tools_prompt_get(const struct cfg *cfg, const char *version, const char *name, json_object *args,
                     json_object *responses, json_object **result, char *err, size_t errlen)
{
    *result = NULL;
    const struct tools_prompt_def *p = name ? find_prompt(cfg, name) : NULL;
    if (!p) {
        snprintf(err, errlen, "unknown prompt '%.200s' (prompts/list names them)", name ? name : "");
        return -ENOENT;
    }
    if (args && !json_object_is_type(args, json_type_object)) {
        snprintf(err, errlen, "arguments must be an object of strings");
        return -EINVAL;
    }
    if (args) {
        json_object_object_foreach(args, key, val) {
            size_t i = 0;
            while (i < ARRAY_SIZE(p->args) && p->args[i].name && strcmp(p->args[i].name, key))
                i++;
            if (i == ARRAY_SIZE(p->args) || !p->args[i].name) {
                snprintf(err, errlen, "prompt %s has no argument '%.100s'", p->name, key);
                return -EINVAL;
            }
            if (!json_object_is_type(val, json_type_string) ||
                json_object_get_string_len(val) > TOOLS_PROMPT_ARG_MAX) {
                snprintf(err, errlen, "argument %s of prompt %s must be a string of at most %d bytes", key, p->name,
                         TOOLS_PROMPT_ARG_MAX);
                return -EINVAL;
            }
        }
    }
    for (size_t i = 0; i < ARRAY_SIZE(p->args) && p->args[i].name; i++) {
        const char *v = arg_of(args, p->args[i].name);
        if (p->args[i].required && (!v || !*v)) {
            snprintf(err, errlen, "prompt %s needs its argument '%s'", p->name, p->args[i].name);
            return -EINVAL;
        }
    }
    json_object *needs = p->needs ? p->needs(responses) : NULL;
    if (needs) {
        *result = tools_input_required(needs, NULL);
        return 0;
    }
    json_object *messages = json_object_new_array();
    int rc = p->get(version, args, messages);
    if (rc < 0) {
        json_object_put(messages);
        snprintf(err, errlen, "cannot make the prompt: %s", strerror(-rc));
        return rc;
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, "description", json_object_new_string(p->description));
    json_object_object_add(r, "messages", messages);
    *result = r;
    return 0;
}
