/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol.c -- the words of the protocol's choices (result.h): the ground
 * truth, and the CUDA timing protocol's switches -- their words on the command
 * line and in the record, and what each word means.
 *
 *   --restage on|off        inputs re-copied at a shifted address before every iteration, or not
 *   --span all|kernels      what one sample spans: every GPU activity of the call, or its kernels
 *   --sync iteration|end    a host synchronization after every timed iteration, or one at the end
 *   --settle off|on         the call issued right after the cold-L2 flush, or after the host has
 *                           waited for the flush to finish (the GPU idle when the call starts)
 *
 * The first word of each is the official evaluator's behaviour and the
 * default; a record without the field was made before the switch existed,
 * when the harness did what the second word says (--settle: the first word,
 * the harness never settled before the switch).
 */
#include <stddef.h>
#include <string.h>

#include "result.h"

/* One switch: its two words and what each means; [2] is the record made before it. */
typedef struct rg_switch {
    const char *word[2];
    const char *text[3];
} rg_switch;

static const rg_switch restage_switch = {
    {"on", "off"},
    {"on: before every warmup and timed iteration the inputs are copied (device to device, on the harness's "
     "stream) from a pristine copy into a pool at an offset 256 B further each iteration, so every call sees "
     "fresh data pointers; the copies come before the cold-L2 flush, outside the timed span",
     "off: every iteration reads the same device buffers",
     "not recorded (a run made before the switch): the same device buffers every iteration"},
};

static const rg_switch span_switch = {
    {"all", "kernels"},
    {"all: one sample is max(end) - min(start) over every GPU activity (kernels, memcpy, memset, on any "
     "stream) whose runtime or driver API call started between two CUPTI timestamps around the call",
     "kernels: one sample is max(end) - min(start) over the kernels whose launch started inside the call; "
     "memcpy and memset work of the call is not counted",
     "not recorded (a run made before the switch): kernels only, from the first kernel's start to the "
     "last kernel's end"},
};

static const rg_switch sync_switch = {
    {"iteration", "end"},
    {"iteration: the host waits for the device (cudaStreamSynchronize, cudaDeviceSynchronize) after the "
     "warmup and after every timed iteration",
     "end: every iteration enqueued back to back, one synchronization at the end",
     "not recorded (a run made before the switch): every iteration enqueued back to back, one "
     "synchronization at the end"},
};

static const rg_switch settle_switch = {
    {"off", "on"},
    {"off: the timed call is issued right after the cold-L2 flush memset is enqueued (the call's work can reach "
     "the GPU while the flush still runs and start the moment it ends)",
     "on: after the flush memset is enqueued the host waits for the stream (cudaStreamSynchronize), then issues "
     "the timed call: every call starts on an idle GPU with the flush finished",
     "not recorded (a run made before the switch): off, the timed call issued right after the cold-L2 flush"},
};

static int parse_word(const rg_switch *sw, const char *s)
{
    for (int i = 0; s && i < 2; i++)
        if (!strcmp(s, sw->word[i])) return i;
    return -1;
}

static const char *text_of(const rg_switch *sw, const char *word)
{
    if (!word || !*word) return sw->text[2];
    int i = parse_word(sw, word);
    return i < 0 ? "unknown (a word this harness does not know)" : sw->text[i];
}

const char *rg_restage_name(rg_restage v) { return restage_switch.word[v == RG_RESTAGE_OFF]; }
const char *rg_span_name(rg_span v) { return span_switch.word[v == RG_SPAN_KERNELS]; }
const char *rg_sync_name(rg_sync v) { return sync_switch.word[v == RG_SYNC_END]; }
const char *rg_settle_name(rg_settle v) { return settle_switch.word[v == RG_SETTLE_ON]; }

int rg_restage_parse(const char *s, rg_restage *v)
{
    int i = parse_word(&restage_switch, s);
    if (i < 0 || !v) return 1;
    *v = i ? RG_RESTAGE_OFF : RG_RESTAGE_ON;
    return 0;
}

int rg_span_parse(const char *s, rg_span *v)
{
    int i = parse_word(&span_switch, s);
    if (i < 0 || !v) return 1;
    *v = i ? RG_SPAN_KERNELS : RG_SPAN_ALL;
    return 0;
}

int rg_sync_parse(const char *s, rg_sync *v)
{
    int i = parse_word(&sync_switch, s);
    if (i < 0 || !v) return 1;
    *v = i ? RG_SYNC_END : RG_SYNC_ITERATION;
    return 0;
}

int rg_settle_parse(const char *s, rg_settle *v)
{
    int i = parse_word(&settle_switch, s);
    if (i < 0 || !v) return 1;
    *v = i ? RG_SETTLE_ON : RG_SETTLE_OFF;
    return 0;
}

const char *rg_restage_text(const char *word) { return text_of(&restage_switch, word); }
const char *rg_span_text(const char *word) { return text_of(&span_switch, word); }
const char *rg_sync_text(const char *word) { return text_of(&sync_switch, word); }
const char *rg_settle_text(const char *word) { return text_of(&settle_switch, word); }

const char *rg_ground_truth_name(rg_ground_truth g)
{
    return g == RG_TRUTH_FLOAT32_REFERENCE ? "float32-reference" : "float64";
}

int rg_ground_truth_parse(const char *s, rg_ground_truth *g)
{
    if (!s || !g) return 1;
    if (!strcmp(s, "float64")) *g = RG_TRUTH_FLOAT64;
    else if (!strcmp(s, "float32-reference")) *g = RG_TRUTH_FLOAT32_REFERENCE;
    else return 1;
    return 0;
}
