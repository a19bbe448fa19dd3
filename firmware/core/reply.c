/*
 * reply.c - the firmware's reports (PROTOCOL.md section 4, firmware -> host): IDENT, STATUS,
 * ACK, NAK, EXECUTED, ERROR, each numbered with the firmware's transmit counter.
 */
#include "reply.h"

static void send_frame(struct fw *fw, uint8_t type, const uint8_t *payload, uint8_t len)
{
    uint8_t out[IDENT_SIZE + WIRE_MIN_BODY + 3u];
    uint16_t n = wire_encode(out, type, fw->tx_seq, payload, len);
    fw->tx_seq++;
    if (!hal_tx(out, n)) {
        fw->tx_dropped++;
    }
}

uint8_t fw_queue_free(const struct fw *fw)
{
    return (uint8_t)(fw->cfg->queue_depth - fw->q_count);
}

void reply_ident(struct fw *fw, uint32_t nonce)
{
    uint8_t p[IDENT_SIZE];
    wire_put32(p, nonce);
    p[4] = FW_PROTOCOL_VERSION;
    p[5] = FW_VERSION_MAJOR;
    p[6] = FW_VERSION_MINOR;
    p[7] = FW_VERSION_PATCH;
    p[8] = FW_MOTOR_CODES;
    p[9] = fw->cfg->queue_depth;
    p[10] = fw->cfg->max_batch;
    wire_put16(p + 11, fw->session ? fw->session_watchdog_ms : fw->cfg->watchdog_ms);
    wire_put32(p + 13, fw->boot_id);
    wire_put32(p + 17, fw->nv->last_received);
    wire_put32(p + 21, fw->nv->started_upto);
    wire_put32(p + 25, fw->nv->last_executed);
    p[29] = fw->state;
    p[30] = fw->error;
    p[31] = fw->boot_flags;
    send_frame(fw, MSG_IDENT, p, IDENT_SIZE);
}

void reply_status(struct fw *fw, uint32_t now_ms)
{
    uint8_t p[STATUS_SIZE];
    wire_put32(p, fw->boot_id);
    p[4] = fw->state;
    p[5] = fw->error;
    p[6] = fw->error_motor;
    p[7] = (uint8_t)((fw->homed ? 1u : 0u) | (fw->session ? 2u : 0u) | (fw->hold ? 4u : 0u));
    p[8] = fw->enabled_mask;
    p[9] = fw_queue_free(fw);
    wire_put16(p + 10, fw->session ? fw->expected_seq : 0u);
    wire_put32(p + 12, fw->nv->last_received);
    wire_put32(p + 16, fw->nv->started_upto);
    wire_put32(p + 20, fw->nv->last_executed);
    wire_put32(p + 24, now_ms - fw->boot_ms);
    send_frame(fw, MSG_STATUS, p, STATUS_SIZE);
}

void reply_ack(struct fw *fw, uint16_t seq)
{
    uint8_t p[7];
    wire_put16(p, seq);
    wire_put32(p + 2, fw->nv->last_received);
    p[6] = fw_queue_free(fw);
    send_frame(fw, MSG_ACK, p, sizeof p);
}

void reply_nak(struct fw *fw, uint16_t seq, uint8_t reason, uint32_t detail)
{
    uint8_t p[7];
    wire_put16(p, seq);
    p[2] = reason;
    wire_put32(p + 3, detail);
    send_frame(fw, MSG_NAK, p, sizeof p);
}

void reply_executed(struct fw *fw)
{
    uint8_t p[9];
    wire_put32(p, fw->nv->last_executed);
    wire_put32(p + 4, fw->nv->started_upto);
    p[8] = fw_queue_free(fw);
    send_frame(fw, MSG_EXECUTED, p, sizeof p);
}

void reply_error(struct fw *fw, uint8_t code, uint8_t motor, uint32_t index)
{
    uint8_t p[8];
    p[0] = code;
    p[1] = motor;
    wire_put32(p + 2, index);
    wire_put16(p + 6, 0);
    send_frame(fw, MSG_ERROR, p, sizeof p);
}
