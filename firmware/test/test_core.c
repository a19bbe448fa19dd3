/*
 * test_core.c - the protocol core compiled for the host (with ASan/UBSan) and checked against
 * the golden frames of PROTOCOL.md (firmware_protocol/golden_frames.txt) and the state machine
 * of PROTOCOL.md section 7.
 *
 *   build/test_core ../firmware_protocol/golden_frames.txt     exit status 0 = all passed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/proto.h"
#include "fake_hal.h"

static int checks, failures;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        checks++;                                                                             \
        if (!(cond)) {                                                                        \
            failures++;                                                                       \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__,    \
                    #cond);                                                                   \
        }                                                                                     \
    } while (0)

/* --- golden frames ---------------------------------------------------------------------------- */

struct golden {
    char name[32];
    unsigned seq, type, crc;
    uint8_t payload[WIRE_MAX_PAYLOAD];
    size_t payload_len;
    uint8_t wire[WIRE_MAX_ENCODED + 1];
    size_t wire_len;
};

static struct golden golden[32];
static int n_golden;

static size_t unhex(const char *hex, uint8_t *out)
{
    size_t n = 0;
    if (strcmp(hex, "-") == 0) {
        return 0;
    }
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        sscanf(hex, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void load_golden(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_core: cannot open %s\n", path);
        exit(2);
    }
    char line[1024], payload[600], wire[700];
    while (fgets(line, sizeof line, f) && n_golden < 32) {
        struct golden *g = &golden[n_golden];
        if (line[0] == '#' || sscanf(line, "%31s %u %x %x %599s %699s", g->name, &g->seq,
                                     &g->type, &g->crc, payload, wire) != 6) {
            continue;
        }
        g->payload_len = unhex(payload, g->payload);
        g->wire_len = unhex(wire, g->wire);
        n_golden++;
    }
    fclose(f);
}

static const struct golden *find_golden(const char *name)
{
    for (int i = 0; i < n_golden; i++) {
        if (strcmp(golden[i].name, name) == 0) {
            return &golden[i];
        }
    }
    fprintf(stderr, "test_core: golden frame %s missing\n", name);
    exit(2);
}

static void test_golden_encode_decode(void)
{
    CHECK(n_golden >= 16);
    CHECK(wire_crc16((const uint8_t *)"123456789", 9, 0xFFFF) == 0x29B1);
    for (int i = 0; i < n_golden; i++) {
        const struct golden *g = &golden[i];
        uint8_t out[WIRE_MAX_ENCODED + 1];
        uint16_t n = wire_encode(out, (uint8_t)g->type, (uint16_t)g->seq, g->payload,
                                 (uint8_t)g->payload_len);
        CHECK(n == g->wire_len && memcmp(out, g->wire, n) == 0);
        static struct wire_rx rx;
        wire_rx_reset(&rx);
        for (size_t k = 0; k + 1 < g->wire_len; k++) {
            CHECK(wire_rx_byte(&rx, g->wire[k]) == WIRE_NONE); /* every prefix: incomplete */
        }
        CHECK(wire_rx_byte(&rx, 0) == WIRE_FRAME);
        CHECK(rx.type == g->type && rx.seq == g->seq && rx.len == g->payload_len);
        CHECK(memcmp(rx.payload, g->payload, g->payload_len) == 0);
        uint8_t body[WIRE_MAX_BODY];
        body[0] = (uint8_t)g->payload_len;
        wire_put16(body + 1, (uint16_t)g->seq);
        body[3] = (uint8_t)g->type;
        memcpy(body + 4, g->payload, g->payload_len);
        CHECK(wire_crc16(body, (uint16_t)(4 + g->payload_len), 0xFFFF) == g->crc);
    }
}

/* --- a board on the bench ---------------------------------------------------------------------- */

static const struct fw_config config = {
    .present_mask = 0x3F, .queue_depth = 16, .max_batch = 16, .watchdog_ms = 1000,
    .status_period_ms = 250, .home_ms = 300,
};
static struct fw fw;
static struct fw_counters nv;
static uint32_t now;

static void boot(uint32_t boot_id)
{
    fake_reset();
    fw_init(&fw, &config, &nv, boot_id, now);
}

static void feed(const uint8_t *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fw_rx_byte(&fw, data[i], now);
    }
}

static void send(uint8_t type, uint16_t seq, const uint8_t *payload, uint8_t len)
{
    uint8_t out[WIRE_MAX_ENCODED + 1];
    feed(out, wire_encode(out, type, seq, payload, len));
}

static void hello(uint16_t seq, uint32_t nonce)
{
    uint8_t p[7] = {1};
    wire_put32(p + 1, nonce);
    wire_put16(p + 5, 1000);
    send(MSG_HELLO, seq, p, 7);
}

/* MOVES from "index motor turns flags" quadruples. */
static void moves(uint16_t seq, int count, const int *spec)
{
    uint8_t p[1 + 7 * 36];
    p[0] = (uint8_t)count;
    for (int k = 0; k < count; k++) {
        uint8_t *m = p + 1 + 7 * k;
        wire_put32(m, (uint32_t)spec[4 * k]);
        m[4] = (uint8_t)spec[4 * k + 1];
        m[5] = (uint8_t)(int8_t)spec[4 * k + 2];
        m[6] = (uint8_t)spec[4 * k + 3];
    }
    send(MSG_MOVES, seq, p, (uint8_t)(1 + 7 * count));
}

static const struct fake_frame *last_nak(void)
{
    return fake_last(MSG_NAK);
}

static void open_session(void)
{
    nv = (struct fw_counters){0, 0, 0};
    now = 1000;
    boot(0xCAFEF00Du);
    hello(256, 0x12345678u);
}

/* --- scenarios ---------------------------------------------------------------------------------- */

static void test_golden_replies(void)
{
    open_session();
    const struct fake_frame *ident = fake_last(MSG_IDENT);
    const struct golden *g = find_golden("ident");
    CHECK(ident && ident->wire_len == g->wire_len);
    CHECK(ident && memcmp(ident->wire, g->wire, g->wire_len) == 0);
    const struct golden *m = find_golden("moves");
    feed(m->wire, m->wire_len);
    const struct fake_frame *ack = fake_last(MSG_ACK);
    const struct golden *a = find_golden("ack");
    CHECK(ack && ack->len == a->payload_len && memcmp(ack->payload, a->payload, 7) == 0);
}

/* A move gripping more than the outer layer (flags bits 1..4): this board has no depth
 * actuator, so the frame is refused whole with BAD_MOVE naming the move; a reserved flag bit
 * (5..7) makes the frame malformed (BAD_PAYLOAD). Nothing is queued either way. */
static void test_depth_moves_refused(void)
{
    open_session();
    const struct golden *g = find_golden("moves_depth");
    feed(g->wire, g->wire_len);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_MOVE);
    CHECK(last_nak() && wire_get32(last_nak()->payload + 3) == 1);
    CHECK(fw.q_count == 0 && nv.last_received == 0);
    now += 50;
    int second_deep[] = {1, 0, 1, 0, 2, 1, 1, 0x02};
    moves(257, 2, second_deep);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_MOVE);
    CHECK(last_nak() && wire_get32(last_nak()->payload + 3) == 2);
    CHECK(fw.q_count == 0);
    now += 50;
    int reserved[] = {1, 0, 1, 0x20};
    moves(257, 1, reserved);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_PAYLOAD);
    CHECK(fw.q_count == 0);
    now += 50;
    int outer[] = {1, 0, 1, 0};
    moves(257, 1, outer);
    CHECK(fake_last(MSG_ACK) && fw.q_count == 1);
}

static void test_sequencing(void)
{
    open_session();
    int one[] = {1, 1, 1, 0};
    moves(258, 1, one); /* 257 is expected */
    CHECK(last_nak() && last_nak()->payload[2] == NAK_SEQ_GAP);
    CHECK(last_nak() && wire_get16(last_nak()->payload) == 257);
    int naks = fake_count(MSG_NAK);
    moves(259, 1, one); /* within the 20 ms hold-off: no second NAK */
    CHECK(fake_count(MSG_NAK) == naks);
    moves(257, 1, one);
    CHECK(fake_last(MSG_ACK) && wire_get16(fake_last(MSG_ACK)->payload) == 257);
    moves(257, 1, one); /* a duplicate: ACK again, nothing queued twice */
    CHECK(fake_count(MSG_ACK) == 2 && fw.q_count == 1);
    uint8_t garbage[] = {0x05, 0x11, 0x22, 0x33, 0x44, 0x00};
    now += 50;
    feed(garbage, sizeof garbage);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_CORRUPT);
    CHECK(wire_get16(last_nak()->payload) == 258);
    send(0x7E, 258, NULL, 0); /* unknown type, in sequence */
    CHECK(last_nak() && last_nak()->payload[2] == NAK_UNKNOWN_TYPE);
    uint8_t bad_home = 0x40;
    send(MSG_HOME, 258, &bad_home, 1);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_PAYLOAD);
    boot(0x1u); /* no session after a reset */
    moves(1, 1, one);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_NO_SESSION);
}

static void test_move_refusals(void)
{
    open_session();
    int open_group[] = {1, 0, 1, FW_MOVE_SIMULTANEOUS};
    moves(257, 1, open_group);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_GROUP);
    int not_opposite[] = {1, 0, 1, FW_MOVE_SIMULTANEOUS, 2, 1, 1, 0};
    moves(257, 2, not_opposite);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_GROUP);
    int gap[] = {5, 0, 1, 0};
    moves(257, 1, gap);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_MOVE_GAP);
    CHECK(last_nak() && wire_get32(last_nak()->payload + 3) == 1);
    uint8_t mask = 0x3E; /* U released */
    send(MSG_ENABLE, 257, &mask, 1);
    int on_u[] = {1, 0, 1, 0};
    moves(258, 1, on_u);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_MOVE);
    int many[4 * 17];
    for (int k = 0; k < 17; k++) {
        int m[] = {k + 1, 1, 1, 0};
        memcpy(many + 4 * k, m, sizeof m);
    }
    moves(258, 17, many); /* more than max_batch */
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BAD_PAYLOAD);
    moves(258, 16, many);
    CHECK(fw.q_count == 16);
    int more[] = {17, 1, 1, 0};
    moves(259, 1, more);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_QUEUE_FULL);
    CHECK(fake.starts == 0);
}

static void run_until_idle(void)
{
    for (int guard = 0; guard < 100 && (fw.q_count || fw.group_active); guard++) {
        fw_poll(&fw, now);
        now += 10;
        fake.busy = 0; /* the group finished */
        fw_poll(&fw, now);
    }
}

static void test_execution_and_pairs(void)
{
    open_session();
    int solve[] = {1, 1, 1, 0, 2, 0, -1, FW_MOVE_SIMULTANEOUS, 3, 3, 2, 0};
    moves(257, 3, solve);
    CHECK(fw.state == FW_RUNNING);
    fw_poll(&fw, now);
    CHECK(fake.starts == 1 && fake.last_n == 1 && fake.last_group[0].motor == 1);
    CHECK(nv.started_upto == 1 && nv.last_executed == 0);
    fake.busy = 0;
    fw_poll(&fw, now);
    CHECK(nv.last_executed == 1 && nv.started_upto == 3);
    CHECK(fake.starts == 2 && fake.last_n == 2);
    CHECK(fake.last_group[0].motor == 0 && fake.last_group[1].motor == 3);
    CHECK(fake.last_group[1].quarter_turns == 2);
    run_until_idle();
    CHECK(nv.last_executed == 3 && fw.state == FW_IDLE);
    const struct fake_frame *ex = fake_last(MSG_EXECUTED);
    CHECK(ex && wire_get32(ex->payload) == 3 && ex->payload[8] == 16);
    CHECK(fake_count(MSG_EXECUTED) == 2);
}

static void test_estop_and_clear(void)
{
    open_session();
    int four[] = {1, 1, 1, 0, 2, 2, 1, 0, 3, 4, 1, 0, 4, 5, 1, 0};
    moves(257, 4, four);
    fw_poll(&fw, now);
    send(MSG_ESTOP, 0, NULL, 0);
    CHECK(fake.stops == 1 && fw.state == FW_STOPPED && fw.error == ERR_ESTOP);
    CHECK(nv.started_upto == 1 && nv.last_executed == 0 && nv.last_received == 1);
    CHECK(fake_last(MSG_ERROR) && fake_last(MSG_ERROR)->payload[0] == ERR_ESTOP);
    CHECK(fake.drivers == 0);
    int next[] = {2, 1, 1, 0};
    moves(258, 1, next);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_STOPPED);
    fake.estop_input = 1; /* the button is still pressed: CLEAR is refused */
    send(MSG_CLEAR, 258, NULL, 0);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_STOPPED && fw.state == FW_STOPPED);
    fake.estop_input = 0;
    send(MSG_CLEAR, 258, NULL, 0);
    CHECK(fw.state == FW_IDLE && fake.drivers == 0x3F);
    moves(259, 1, next);
    CHECK(fw.q_count == 1 && fw.state == FW_RUNNING);
    fw_estop(&fw, now); /* the hardware input */
    CHECK(fw.state == FW_STOPPED && fw.q_count == 0);
}

static void test_watchdog_stops_after_group(void)
{
    open_session();
    int two[] = {1, 1, 1, 0, 2, 2, 1, 0};
    moves(257, 2, two);
    fw_poll(&fw, now);
    now += 1001;
    fw_poll(&fw, now);
    CHECK(!fw.session && fw.stop_after_group && fw.q_count == 0);
    CHECK(fake_last(MSG_ERROR) && fake_last(MSG_ERROR)->payload[0] == ERR_WATCHDOG);
    fake.busy = 0;
    fw_poll(&fw, now);
    CHECK(fw.state == FW_STOPPED && fw.error == ERR_WATCHDOG && fake.drivers == 0);
    CHECK(nv.last_executed == 1 && nv.last_received == 1 && fake.starts == 1);
    hello(300, 0x9999u); /* the host returns: CLEAR, then the lost move again */
    send(MSG_CLEAR, 301, NULL, 0);
    CHECK(fw.state == FW_IDLE && fake.drivers == 0x3F);
}

static void test_hold_resume_home(void)
{
    open_session();
    send(MSG_HOLD, 0, NULL, 0);
    CHECK(fw.state == FW_HOLD && fake_last(MSG_STATUS));
    int one[] = {1, 1, 1, 0};
    moves(257, 1, one);
    fw_poll(&fw, now);
    CHECK(fake.starts == 0 && fw.q_count == 1);
    send(MSG_RESUME, 0, NULL, 0);
    fw_poll(&fw, now);
    CHECK(fake.starts == 1);
    uint8_t mask = 0x3F;
    send(MSG_HOME, 258, &mask, 1);
    CHECK(last_nak() && last_nak()->payload[2] == NAK_BUSY);
    run_until_idle();
    send(MSG_HOME, 258, &mask, 1);
    CHECK(fw.state == FW_HOMING);
    now += 300;
    fw_poll(&fw, now);
    CHECK(fw.state == FW_IDLE && fw.homed);
}

static void test_reset_keeps_counters(void)
{
    open_session();
    int two[] = {1, 1, 1, 0, 2, 2, 1, 0};
    moves(257, 2, two);
    fw_poll(&fw, now); /* move 1 started, move 2 queued */
    boot(0xABCDu);     /* reset mid-turn */
    fw_announce(&fw);
    const struct fake_frame *ident = fake_last(MSG_IDENT);
    CHECK(ident && wire_get32(ident->payload) == 0);
    CHECK(ident && wire_get32(ident->payload + 17) == 1); /* last_received := started_upto */
    CHECK(ident && wire_get32(ident->payload + 21) == 1);
    CHECK(ident && wire_get32(ident->payload + 25) == 0); /* move 1: interrupted */
}

static void test_garbage_never_moves(void)
{
    srand(16);
    for (int round = 0; round < 2; round++) {
        open_session();
        if (round == 1) {
            fw.session = 0;
        }
        for (long i = 0; i < 2000000; i++) {
            fw_rx_byte(&fw, (uint8_t)(rand() & 0xFF), now);
            if (fake.n_frames > FAKE_MAX_FRAMES - 4) {
                fake.n_frames = 0;
            }
            if ((i & 0xFFF) == 0) {
                now += 7;
                fw_poll(&fw, now);
            }
        }
        CHECK(fake.starts == 0 && fw.q_count == 0);
        CHECK(fw.corrupt_rx > 1000);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s golden_frames.txt\n", argv[0]);
        return 2;
    }
    load_golden(argv[1]);
    test_golden_encode_decode();
    test_golden_replies();
    test_depth_moves_refused();
    test_sequencing();
    test_move_refusals();
    test_execution_and_pairs();
    test_estop_and_clear();
    test_watchdog_stops_after_group();
    test_hold_resume_home();
    test_reset_keeps_counters();
    test_garbage_never_moves();
    printf("test_core: %d checks, %d failed, %d golden frames\n", checks, failures, n_golden);
    return failures ? 1 : 0;
}
