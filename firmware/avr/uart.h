/*
 * uart.h - interrupt-driven UART with bounded receive and transmit rings (no flow control).
 * A receive overrun drops bytes (the protocol's CRC and retransmission recover them).
 */
#ifndef CUBEROBOT_UART_H
#define CUBEROBOT_UART_H

#include <stdint.h>

void uart_init(void);
/* Next received byte into *byte; 0 when the ring is empty. */
uint8_t uart_read(uint8_t *byte);
/* Queue n bytes; 0 (and nothing queued) when they do not all fit. */
uint8_t uart_write(const uint8_t *data, uint16_t n);
uint16_t uart_rx_overruns(void);
/* Nonzero when received bytes wait in the ring. */
uint8_t uart_pending(void);

#endif
