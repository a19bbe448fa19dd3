/*
 * proto.c - the firmware's protocol state machine (PROTOCOL.md sections 3-7).
 *
 * Receive path (per valid frame; any valid frame feeds the watchdog):
 *   HELLO      open or keep the session, reply IDENT(nonce)
 *   realtime   act (ESTOP, HOLD, RESUME) and reply STATUS; HEARTBEAT feeds the watchdog
 *   sequenced  no session -> NAK NO_SESSION; old seq -> ACK(expected - 1);
 *              future seq -> NAK SEQ_GAP; expected seq -> act, ACK or NAK(reason)
 *   corrupt    NAK(expected, CORRUPT) when a session is open, at most once per 20 ms
 */
#include "proto.h"

#include "reply.h"


#define NOT_REFUSED 0u

static uint8_t refusal_reason;
static uint32_t refusal_detail;

static uint8_t refuse(uint8_t reason, uint32_t detail)
{
    refusal_reason = reason;
    refusal_detail = detail;
    return reason;
}

/* --- state ---------------------------------------------------------------------------------- */

static void set_state(struct fw *fw, uint8_t state, uint32_t now_ms)
{
    if (state != fw->state) {
        fw->state = state;
        reply_status(fw, now_ms);
    }
}

static void discard_queue(struct fw *fw)
{
    fw->q_count = 0;
    fw->nv->last_received = fw->nv->started_upto;
    hal_nv_commit();
}

static void stop_now(struct fw *fw, uint8_t state, uint8_t error, uint8_t motor)
{
    uint32_t index = fw->group_active ? fw->group_first : 0u;
    hal_motion_stop();
    fw->group_active = 0; /* interrupted: last_executed stays behind started_upto */
    discard_queue(fw);
    fw->hold = 0;
    fw->stop_after_group = 0;
    fw->error = error;
    fw->error_motor = motor;
    fw->state = state;
    hal_drivers(0);
    reply_error(fw, error, motor, index);
}

static void estop(struct fw *fw)
{
    if (fw->state == FW_STOPPED && fw->error == ERR_ESTOP) {
        return; /* ESTOP is repeated until the host sees STOPPED: idempotent */
    }
    stop_now(fw, FW_STOPPED, ERR_ESTOP, FW_NO_MOTOR);
}

void fw_estop(struct fw *fw, uint32_t now_ms)
{
    uint8_t before = fw->state;
    estop(fw);
    if (fw->state != before) {
        reply_status(fw, now_ms);
    }
}

/* --- init ----------------------------------------------------------------------------------- */

void fw_init(struct fw *fw, const struct fw_config *cfg, struct fw_counters *nv,
             uint32_t boot_id, uint32_t now_ms)
{
    uint8_t *raw = (uint8_t *)fw;
    for (uint16_t i = 0; i < sizeof *fw; i++) {
        raw[i] = 0;
    }
    fw->cfg = cfg;
    fw->nv = nv;
    fw->boot_id = boot_id;
    fw->boot_ms = now_ms;
    fw->error_motor = FW_NO_MOTOR;
    fw->enabled_mask = cfg->present_mask;
    fw->state = FW_IDLE;
    wire_rx_reset(&fw->rx);
    nv->last_received = nv->started_upto; /* the queue was RAM */
    hal_nv_commit();
    hal_drivers(fw->enabled_mask);
}

void fw_announce(struct fw *fw)
{
    reply_ident(fw, 0);
}

/* --- commands (sequenced) --------------------------------------------------------------- */

static uint8_t check_moves(const struct fw *fw, const uint8_t *p, uint8_t count)
{
    if (count > fw->cfg->max_batch) {
        return refuse(NAK_BAD_PAYLOAD, fw->cfg->max_batch);
    }
    const uint8_t *last = p + 7u * (count - 1u);
    if (last[6] & FW_MOVE_SIMULTANEOUS) {
        return refuse(NAK_BAD_GROUP, wire_get32(last));
    }
    for (uint8_t k = 0; k < count; k++) {
        const uint8_t *m = p + 7u * k;
        /* a disabled motor, or a deeper grip than the outer layer (no depth actuator) */
        if (!(fw->enabled_mask & (1u << m[4])) || (m[6] & FW_MOVE_DEPTH_MASK)) {
            return refuse(NAK_BAD_MOVE, wire_get32(m));
        }
        if (!(m[6] & FW_MOVE_SIMULTANEOUS)) {
            continue;
        }
        const uint8_t *next = m + 7;
        if (next[4] != (m[4] + 3u) % 6u || (next[6] & FW_MOVE_SIMULTANEOUS)) {
            return refuse(NAK_BAD_GROUP, wire_get32(m));
        }
    }
    return NOT_REFUSED;
}

static uint8_t on_moves(struct fw *fw, const uint8_t *payload, uint32_t now_ms)
{
    if (fw->state == FW_STOPPED || fw->state == FW_FAULT) {
        return refuse(NAK_STOPPED, fw->error);
    }
    if (fw->state == FW_HOMING) {
        return refuse(NAK_BUSY, 0);
    }
    uint8_t count = payload[0];
    const uint8_t *p = payload + 1;
    if (check_moves(fw, p, count) != NOT_REFUSED) {
        return refusal_reason;
    }
    uint8_t skip = 0;
    while (skip < count && wire_get32(p + 7u * skip) <= fw->nv->last_received) {
        skip++;
    }
    if (skip == count) {
        return NOT_REFUSED; /* a repeat after a reconnect: already queued or done */
    }
    if (wire_get32(p + 7u * skip) != fw->nv->last_received + 1u) {
        return refuse(NAK_MOVE_GAP, fw->nv->last_received + 1u);
    }
    uint8_t fresh = (uint8_t)(count - skip);
    if (fresh > fw_queue_free(fw)) {
        return refuse(NAK_QUEUE_FULL, fw_queue_free(fw));
    }
    for (uint8_t k = skip; k < count; k++) {
        const uint8_t *m = p + 7u * k;
        struct fw_move *slot =
            &fw->queue[(uint8_t)(fw->q_head + fw->q_count) % fw->cfg->queue_depth];
        slot->motor = m[4];
        slot->quarter_turns = (int8_t)m[5];
        slot->flags = m[6];
        fw->q_count++;
    }
    fw->nv->last_received = wire_get32(p + 7u * (count - 1u));
    hal_nv_commit();
    if (fw->state == FW_IDLE) {
        set_state(fw, fw->hold ? FW_HOLD : FW_RUNNING, now_ms);
    }
    return NOT_REFUSED;
}

static uint8_t busy(const struct fw *fw)
{
    return fw->q_count || fw->group_active || fw->state == FW_HOMING;
}

static uint8_t on_home(struct fw *fw, uint32_t now_ms)
{
    if (busy(fw)) {
        return refuse(NAK_BUSY, 0);
    }
    if (hal_estop_active()) {
        return refuse(NAK_STOPPED, ERR_ESTOP);
    }
    fw->hold = 0;
    hal_drivers(fw->enabled_mask);
    fw->home_until_ms = now_ms + fw->cfg->home_ms;
    set_state(fw, FW_HOMING, now_ms);
    return NOT_REFUSED;
}

static uint8_t on_enable(struct fw *fw, uint8_t mask, uint32_t now_ms)
{
    if (busy(fw)) {
        return refuse(NAK_BUSY, 0);
    }
    fw->enabled_mask = (uint8_t)(mask & fw->cfg->present_mask);
    if (fw->state != FW_STOPPED && fw->state != FW_FAULT) {
        hal_drivers(fw->enabled_mask);
    }
    reply_status(fw, now_ms);
    return NOT_REFUSED;
}

static uint8_t on_clear(struct fw *fw, uint32_t now_ms)
{
    if (fw->state != FW_STOPPED && fw->state != FW_FAULT) {
        return NOT_REFUSED;
    }
    if (hal_estop_active()) {
        return refuse(NAK_STOPPED, ERR_ESTOP);
    }
    fw->error = ERR_NONE;
    fw->error_motor = FW_NO_MOTOR;
    hal_drivers(fw->enabled_mask);
    set_state(fw, FW_IDLE, now_ms);
    return NOT_REFUSED;
}

/* --- frame validation (mirrors firmware_protocol.messages.parse_message) ------------------ */

static uint8_t moves_valid(const uint8_t *payload, uint8_t len)
{
    if (len == 0) {
        return 0;
    }
    uint8_t count = payload[0];
    if (count == 0 || (uint16_t)len != 1u + 7u * count) {
        return 0;
    }
    for (uint8_t k = 0; k < count; k++) {
        const uint8_t *m = payload + 1 + 7u * k;
        uint32_t index = wire_get32(m);
        int8_t turns = (int8_t)m[5];
        uint8_t turns_ok = turns == 1 || turns == -1 || turns == 2 || turns == -2;
        if (index == 0 || m[4] >= FW_MOTOR_CODES || !turns_ok || (m[6] & FW_MOVE_RESERVED)) {
            return 0;
        }
        if (k > 0 && index != wire_get32(m - 7) + 1u) {
            return 0;
        }
    }
    return 1;
}

/* 1: well formed; 0: malformed.  Only host-direction types are judged here. */
static uint8_t payload_valid(uint8_t type, const uint8_t *p, uint8_t len)
{
    switch (type) {
    case MSG_HELLO:
        return len == 7;
    case MSG_MOVES:
        return moves_valid(p, len);
    case MSG_HOME:
        return len == 1 && p[0] >= 1 && p[0] <= 0x3F;
    case MSG_ENABLE:
        return len == 1 && p[0] <= 0x3F;
    default:
        return len == 0; /* CLEAR and the realtime messages are empty */
    }
}

static uint8_t is_sequenced(uint8_t type)
{
    return type >= MSG_MOVES && type <= MSG_CLEAR;
}

static uint8_t is_host_type(uint8_t type)
{
    return (type >= MSG_HELLO && type <= MSG_CLEAR) ||
           (type >= MSG_ESTOP && type <= MSG_HEARTBEAT);
}

/* Size of a well-formed firmware-direction frame, 0 for a type that is not one. */
static uint8_t firmware_type_size(uint8_t type)
{
    static const uint8_t sizes[6] = {IDENT_SIZE, 7, 7, 9, STATUS_SIZE, 8};
    return (type >= MSG_IDENT && type <= MSG_ERROR) ? sizes[type - MSG_IDENT] : 0u;
}

/* --- sequenced delivery ------------------------------------------------------------------- */

static uint8_t nak_allowed(struct fw *fw, uint32_t now_ms)
{
    if (fw->nak_valid && fw->nak_expected == fw->expected_seq &&
        (uint32_t)(now_ms - fw->nak_at_ms) < FW_NAK_HOLDOFF_MS) {
        return 0;
    }
    fw->nak_valid = 1;
    fw->nak_expected = fw->expected_seq;
    fw->nak_at_ms = now_ms;
    return 1;
}

static uint8_t act(struct fw *fw, uint8_t type, const uint8_t *p, uint8_t ok, uint32_t now_ms)
{
    if (!is_host_type(type)) {
        return refuse(NAK_UNKNOWN_TYPE, 0);
    }
    if (!ok) {
        return refuse(NAK_BAD_PAYLOAD, 0);
    }
    switch (type) {
    case MSG_MOVES:
        return on_moves(fw, p, now_ms);
    case MSG_HOME:
        return on_home(fw, now_ms);
    case MSG_ENABLE:
        return on_enable(fw, p[0], now_ms);
    default:
        return on_clear(fw, now_ms);
    }
}

static void sequenced(struct fw *fw, uint8_t type, uint16_t seq, const uint8_t *p, uint8_t ok,
                      uint32_t now_ms)
{
    if (!fw->session) {
        reply_nak(fw, seq, NAK_NO_SESSION, 0);
        return;
    }
    uint16_t distance = (uint16_t)(seq - fw->expected_seq);
    if (distance >= 0x8000u) { /* before expected: a duplicate */
        reply_ack(fw, (uint16_t)(fw->expected_seq - 1u));
        return;
    }
    if (distance > 0) { /* a frame before this one was lost */
        if (nak_allowed(fw, now_ms)) {
            reply_nak(fw, fw->expected_seq, NAK_SEQ_GAP, 0);
        }
        return;
    }
    if (act(fw, type, p, ok, now_ms) != NOT_REFUSED) {
        reply_nak(fw, seq, refusal_reason, refusal_detail);
        return;
    }
    fw->expected_seq = (uint16_t)(seq + 1u);
    reply_ack(fw, seq);
}

/* --- realtime and session ------------------------------------------------------------------ */

static void on_hello(struct fw *fw, uint16_t seq, const uint8_t *p, uint32_t now_ms)
{
    uint32_t nonce = wire_get32(p + 1);
    if (!fw->session || fw->nonce != nonce) {
        uint16_t watchdog = wire_get16(p + 5);
        fw->session = 1;
        fw->nonce = nonce;
        fw->expected_seq = (uint16_t)(seq + 1u);
        fw->session_watchdog_ms = watchdog ? watchdog : fw->cfg->watchdog_ms;
        fw->last_rx_ms = now_ms;
        fw->nak_valid = 0;
        fw->stop_after_group = 0; /* the host is back before the watchdog stop landed */
    }
    reply_ident(fw, nonce);
}

static void on_hold(struct fw *fw)
{
    fw->hold = 1;
    if (!fw->group_active && (fw->state == FW_RUNNING || fw->state == FW_IDLE)) {
        fw->state = FW_HOLD;
    }
}

static void on_resume(struct fw *fw)
{
    fw->hold = 0;
    if (fw->state == FW_HOLD) {
        fw->state = fw->q_count ? FW_RUNNING : FW_IDLE;
    }
}

static void realtime(struct fw *fw, uint8_t type, uint32_t now_ms)
{
    switch (type) {
    case MSG_HEARTBEAT:
        if (!fw->session) { /* tell a host that thinks it has a session */
            reply_nak(fw, 0, NAK_NO_SESSION, 0);
        }
        return;
    case MSG_ESTOP:
        estop(fw);
        break;
    case MSG_HOLD:
        on_hold(fw);
        break;
    case MSG_RESUME:
        on_resume(fw);
        break;
    default: /* STATUS_REQUEST */
        break;
    }
    reply_status(fw, now_ms);
}

static void on_frame(struct fw *fw, uint32_t now_ms)
{
    uint8_t type = fw->rx.type;
    uint8_t len = fw->rx.len;
    const uint8_t *p = fw->rx.payload;
    uint8_t ok = is_host_type(type) && payload_valid(type, p, len);
    if (!ok && !is_sequenced(type) && is_host_type(type)) {
        return; /* malformed HELLO or realtime frame: ignore */
    }
    if (firmware_type_size(type)) {
        if (len == firmware_type_size(type) && fw->session) {
            fw->last_rx_ms = now_ms; /* an echo of ours: valid, so it feeds the watchdog */
        }
        return;
    }
    if (fw->session) {
        fw->last_rx_ms = now_ms;
    }
    if (type == MSG_HELLO) {
        on_hello(fw, fw->rx.seq, p, now_ms);
    } else if (is_sequenced(type) || !is_host_type(type)) {
        sequenced(fw, type, fw->rx.seq, p, ok, now_ms);
    } else {
        realtime(fw, type, now_ms);
    }
}

void fw_rx_byte(struct fw *fw, uint8_t byte, uint32_t now_ms)
{
    enum wire_result r = wire_rx_byte(&fw->rx, byte);
    if (r == WIRE_FRAME) {
        fw->frames_rx++;
        on_frame(fw, now_ms);
    } else if (r == WIRE_CORRUPT) {
        fw->corrupt_rx++;
        if (fw->session && nak_allowed(fw, now_ms)) {
            reply_nak(fw, fw->expected_seq, NAK_CORRUPT, 0);
        }
    }
}

/* --- periodic work: motion, homing, watchdog, STATUS ---------------------------------------- */

/* The running group stopped and settled: report it and move the state on. */
static void report_finished(struct fw *fw, uint32_t now_ms)
{
    reply_executed(fw);
    if (fw->stop_after_group) {
        fw->stop_after_group = 0;
        discard_queue(fw);
        fw->error = ERR_WATCHDOG;
        hal_drivers(0);
        set_state(fw, FW_STOPPED, now_ms);
    } else if (fw->hold) {
        set_state(fw, FW_HOLD, now_ms);
    } else if (!fw->q_count && !fw->group_active) {
        set_state(fw, FW_IDLE, now_ms);
    }
}

static void start_group(struct fw *fw)
{
    struct fw_move group[2];
    uint8_t n = 0;
    uint32_t first = fw->nv->last_received - fw->q_count + 1u;
    do {
        group[n++] = fw->queue[fw->q_head];
        fw->q_head = (uint8_t)((fw->q_head + 1u) % fw->cfg->queue_depth);
        fw->q_count--;
    } while (n < 2 && fw->q_count && (group[n - 1].flags & FW_MOVE_SIMULTANEOUS));
    fw->group_first = first;
    fw->group_last = first + n - 1u;
    fw->group_active = 1;
    fw->nv->started_upto = fw->group_last; /* written before the motors start */
    hal_nv_commit();
    hal_motion_start(group, n);
}

static void watchdog_expired(struct fw *fw, uint32_t now_ms)
{
    fw->session = 0;
    if (!fw->group_active && !fw->q_count && fw->state != FW_HOMING) {
        return; /* the host went quiet while idle: just close the session */
    }
    discard_queue(fw);
    reply_error(fw, ERR_WATCHDOG, FW_NO_MOTOR, fw->nv->started_upto);
    if (fw->group_active) {
        fw->stop_after_group = 1; /* the group in progress finishes, then STOPPED */
        return;
    }
    fw->error = ERR_WATCHDOG;
    fw->hold = 0;
    hal_drivers(0);
    set_state(fw, FW_STOPPED, now_ms);
}

/*
 * A finished group's last_executed is written first, the next group (when there is one) starts
 * next, and the EXECUTED report goes out last, so the motors do not wait for the UART: that
 * report then carries the new started_upto, as in PROTOCOL.md's example exchange.
 */
static void poll_motion(struct fw *fw, uint32_t now_ms)
{
    uint8_t finished = fw->group_active && !hal_motion_busy();
    if (finished) {
        fw->group_active = 0;
        fw->nv->last_executed = fw->group_last;
    }
    if (fw->state == FW_RUNNING && fw->q_count && !fw->hold && !fw->stop_after_group &&
        !fw->group_active) {
        start_group(fw); /* commits both counters before the motors start */
    } else if (finished) {
        hal_nv_commit();
    }
    if (finished) {
        report_finished(fw, now_ms);
    }
}

void fw_poll(struct fw *fw, uint32_t now_ms)
{
    poll_motion(fw, now_ms);
    if (fw->state == FW_HOMING && (int32_t)(now_ms - fw->home_until_ms) >= 0) {
        fw->homed = 1;
        fw->error = ERR_NONE;
        fw->error_motor = FW_NO_MOTOR;
        set_state(fw, FW_IDLE, now_ms);
    }
    if (!fw->session) {
        return;
    }
    if ((uint32_t)(now_ms - fw->last_rx_ms) > fw->session_watchdog_ms) {
        watchdog_expired(fw, now_ms);
        return;
    }
    if ((int32_t)(now_ms - fw->next_status_ms) >= 0) {
        fw->next_status_ms = now_ms + fw->cfg->status_period_ms;
        reply_status(fw, now_ms);
    }
}
