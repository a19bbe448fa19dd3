/*
 * wire.h - framing of the cuberobot firmware protocol (PROTOCOL.md section 2).
 *
 * Plain C99, no AVR dependency: the same file is compiled for the board and, by the test suite,
 * for the host.  A frame on the wire is COBS(LEN SEQ TYPE PAYLOAD CRC) followed by 0x00.
 * CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over LEN..PAYLOAD, little-endian.
 */
#ifndef CUBEROBOT_WIRE_H
#define CUBEROBOT_WIRE_H

#include <stdint.h>

#define WIRE_HEADER_SIZE 4u        /* LEN u8, SEQ u16, TYPE u8 */
#define WIRE_CRC_SIZE 2u
#define WIRE_MAX_PAYLOAD 255u
#define WIRE_MIN_BODY (WIRE_HEADER_SIZE + WIRE_CRC_SIZE)               /* 6 */
#define WIRE_MAX_BODY (WIRE_HEADER_SIZE + WIRE_MAX_PAYLOAD + WIRE_CRC_SIZE) /* 261 */
#define WIRE_MAX_ENCODED (WIRE_MAX_BODY + 2u) /* 263: one COBS code byte per started 254 */

/* What the receiver made of the bytes up to a delimiter. */
enum wire_result {
    WIRE_NONE = 0,      /* no complete frame yet (or an empty frame: a filler delimiter) */
    WIRE_FRAME = 1,     /* a valid frame is in the decoder (type, seq, payload, len) */
    WIRE_CORRUPT = 2    /* bad COBS, bad LEN, bad CRC, or too long without a delimiter */
};

/* Streaming receiver: bounded to one encoded frame; never allocates. */
struct wire_rx {
    uint8_t buf[WIRE_MAX_ENCODED + 1u];
    uint16_t fill;
    uint8_t discarding; /* dropping noise up to the next delimiter */
    /* the last frame, valid after WIRE_FRAME until the next byte is fed */
    uint8_t type;
    uint16_t seq;
    uint8_t len;
    const uint8_t *payload;
};

uint16_t wire_crc16(const uint8_t *data, uint16_t n, uint16_t crc);
void wire_rx_reset(struct wire_rx *rx);
enum wire_result wire_rx_byte(struct wire_rx *rx, uint8_t byte);

/*
 * Encode one frame into out (room for WIRE_MAX_ENCODED + 1 bytes is always enough; the
 * firmware's own frames are at most 37 bytes).  Returns the number of bytes including the
 * delimiter.
 */
uint16_t wire_encode(uint8_t *out, uint8_t type, uint16_t seq, const uint8_t *payload,
                     uint8_t len);

/* Little-endian helpers. */
static inline uint16_t wire_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | ((uint16_t)p[1] << 8));
}
static inline uint32_t wire_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline void wire_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void wire_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
