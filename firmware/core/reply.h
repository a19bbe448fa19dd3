/*
 * reply.h - encoders of the firmware's reports, shared by the protocol core's modules.
 */
#ifndef CUBEROBOT_REPLY_H
#define CUBEROBOT_REPLY_H

#include "proto.h"

#define IDENT_SIZE 32u /* protocol v2: 31 bytes and boot_flags */
#define STATUS_SIZE 28u

void reply_ident(struct fw *fw, uint32_t nonce);
void reply_status(struct fw *fw, uint32_t now_ms);
void reply_ack(struct fw *fw, uint16_t seq);
void reply_nak(struct fw *fw, uint16_t seq, uint8_t reason, uint32_t detail);
void reply_executed(struct fw *fw);
void reply_error(struct fw *fw, uint8_t code, uint8_t motor, uint32_t index);

#endif
