/* web_internal.h: what the files of the web module share: web.c serves a
 * request of the page's API (its fields, the run, the answer and its event
 * stream) for a route described by a struct web_door; web_cell.c is
 * /api/cell's door, whose requests run in a notebook's workspace. */
#ifndef RMS_WEB_INTERNAL_H
#define RMS_WEB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "executor.h"
#include "form.h"
#include "http.h"
#include "web.h"

/* The fields a request of the API may carry (bits of web_door.fields), in
 * the order of web.c's table. */
enum web_field {
    WEB_F_CODE, WEB_F_INPUT, WEB_F_INPUT_FILE, WEB_F_INPUT_URL, WEB_F_REQUIREMENTS, WEB_F_TIMEOUT,
    WEB_F_NOTEBOOK, /* the code is a Jupyter notebook: this its file name (exec_spec.notebook) */
    WEB_F_NETWORK,
};

/* The workspace a request runs in, as its door opened it. */
struct web_ws {
    char id[WS_ID_MAX + 1]; /* the workspace's id, told the page ("": none) */
    char *dir;              /* its workspace/ directory, the spec's (owned: the door's close frees it) */
    bool made;              /* made for this request */
};

/* A route of the API: its fields, the executor's call it makes, and (NULL
 * for none) how it opens its workspace. */
struct web_door {
    const char *route; /* "/api/run", for the log */
    unsigned fields;   /* 1u << enum web_field for each field it takes */
    bool cell;         /* the executor's cell (a notebook's kernel), else its run */
    /* The workspace the request names (wid, from its path; NULL: none,
     * make one) into ws: 0, or an HTTP status with the reason in err. */
    int (*open)(const struct app *app, const char *wid, struct web_ws *ws, char *err, size_t errlen);
    /* Lets ws go after the request (and removes it when drop: it was made
     * for a request that ran nothing). Called whether open succeeded or not. */
    void (*close)(const struct app *app, struct web_ws *ws, bool drop);
};

/* Serves one request of door: POST only; the fields read, the workspace
 * wid opened (door->open), the spec made, run, answered as Accept asks
 * (events, a page, the result JSON, which names the workspace when there
 * is one). */
void web__serve(const struct app *app, struct http_req *req, struct http_resp *resp, const struct web_door *door,
                const char *wid);

/* Reads a multipart/form-data body (Content-Type ct) through the form
 * parser with the form_* limits and request_bytes, handing its parts to
 * cb; *slot points at the parser while it runs (for form_fail in the
 * callbacks), NULL after. 0, or an HTTP status (400, 413) with the reason
 * in err. */
int web__read_form(const struct app *app, struct http_req *req, const char *ct, const struct form_callbacks *cb,
                   struct form_parser **slot, char *err, size_t errlen) must_check;

/* POST api/cell/WID/file (web_file.c): a file of the person's into the
 * notebook's workspace (wid NULL: a new one, named in the answer), at
 * mounts/PATH, as write_file puts one. */
void web__cell_file(const struct app *app, struct http_req *req, struct http_resp *resp, const char *wid);

/* The plain HTML answers (web_page.c): s escaped into b; a page's head
 * with its title, and its foot; b sent as the page with status; the result
 * page of r (res: its JSON) with status. */
void web__html_escape(struct dbuf *b, const char *s, size_t n);
void web__html_head(struct dbuf *b, const char *title);
void web__html_foot(struct dbuf *b);
void web__send_html(struct http_resp *resp, int status, struct dbuf *b);
void web__result_page(struct http_resp *resp, int status, const struct result *r, json_object *res);

#endif
