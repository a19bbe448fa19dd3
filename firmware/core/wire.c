/*
 * wire.c - CRC-16/CCITT-FALSE, COBS and the streaming frame receiver (PROTOCOL.md section 2).
 */
#include "wire.h"

uint16_t wire_crc16(const uint8_t *data, uint16_t n, uint16_t crc)
{
    /* Byte-wise form of the 0x1021 polynomial: no table, so no flash or RAM for one. */
    for (uint16_t i = 0; i < n; i++) {
        uint8_t x = (uint8_t)((crc >> 8) ^ data[i]);
        x ^= (uint8_t)(x >> 4);
        crc = (uint16_t)((crc << 8) ^ ((uint16_t)x << 12) ^ ((uint16_t)x << 5) ^ x);
    }
    return crc;
}

void wire_rx_reset(struct wire_rx *rx)
{
    rx->fill = 0;
    rx->discarding = 0;
    rx->len = 0;
    rx->payload = rx->buf;
}

/* COBS-decode buf[0..n) in place; returns the body length, or -1 when a code overruns. */
static int16_t cobs_decode_in_place(uint8_t *buf, uint16_t n)
{
    uint16_t in = 0;
    uint16_t out = 0;
    while (in < n) {
        uint8_t code = buf[in];
        uint16_t end = (uint16_t)(in + code);
        if (code == 0 || end > n) {
            return -1;
        }
        in++;
        while (in < end) {
            buf[out++] = buf[in++];
        }
        if (code != 0xFF && in < n) {
            buf[out++] = 0;
        }
    }
    return (int16_t)out;
}

static enum wire_result finish_frame(struct wire_rx *rx)
{
    uint16_t n = rx->fill;
    rx->fill = 0;
    if (n == 0) {
        return WIRE_NONE; /* a filler delimiter */
    }
    int16_t body = cobs_decode_in_place(rx->buf, n);
    if (body < (int16_t)WIRE_MIN_BODY) {
        return WIRE_CORRUPT;
    }
    uint8_t len = rx->buf[0];
    if ((uint16_t)len + WIRE_MIN_BODY != (uint16_t)body) {
        return WIRE_CORRUPT;
    }
    uint16_t crc = wire_crc16(rx->buf, (uint16_t)(WIRE_HEADER_SIZE + len), 0xFFFF);
    if (crc != wire_get16(rx->buf + WIRE_HEADER_SIZE + len)) {
        return WIRE_CORRUPT;
    }
    rx->len = len;
    rx->seq = wire_get16(rx->buf + 1);
    rx->type = rx->buf[3];
    rx->payload = rx->buf + WIRE_HEADER_SIZE;
    return WIRE_FRAME;
}

enum wire_result wire_rx_byte(struct wire_rx *rx, uint8_t byte)
{
    if (rx->discarding) {
        if (byte == 0) {
            rx->discarding = 0;
        }
        return WIRE_NONE;
    }
    if (byte == 0) {
        return finish_frame(rx);
    }
    if (rx->fill >= WIRE_MAX_ENCODED) {
        /* more than a frame without a delimiter: noise, or a lost delimiter */
        rx->fill = 0;
        rx->discarding = 1;
        return WIRE_CORRUPT;
    }
    rx->buf[rx->fill++] = byte;
    return WIRE_NONE;
}

uint16_t wire_encode(uint8_t *out, uint8_t type, uint16_t seq, const uint8_t *payload,
                     uint8_t len)
{
    /*
     * Build the body two bytes in, then COBS-encode it in place from the front.  The write
     * position starts one byte behind the read position and only a 254-byte run (at most one
     * in a 261-byte body) adds a code byte without consuming input, so a write never overtakes
     * an unread byte.
     */
    uint8_t *body = out + 2;
    uint16_t n = 0;
    body[n++] = len;
    body[n++] = (uint8_t)seq;
    body[n++] = (uint8_t)(seq >> 8);
    body[n++] = type;
    for (uint8_t i = 0; i < len; i++) {
        body[n++] = payload[i];
    }
    uint16_t crc = wire_crc16(body, n, 0xFFFF);
    body[n++] = (uint8_t)crc;
    body[n++] = (uint8_t)(crc >> 8);

    uint16_t code_at = 0;
    uint16_t w = 1;
    uint8_t code = 1;
    for (uint16_t r = 0; r < n; r++) {
        uint8_t b = body[r];
        if (b == 0) {
            out[code_at] = code;
            code_at = w++;
            code = 1;
            continue;
        }
        out[w++] = b;
        code++;
        if (code == 0xFF) {
            out[code_at] = code;
            code_at = w++;
            code = 1;
        }
    }
    out[code_at] = code;
    out[w++] = 0;
    return w;
}
