/*
 * uart.c - the host link's UART: 8N1 at BOARD_BAUD, receive and transmit rings.
 */
#include "uart.h"

#include <avr/interrupt.h>
#include <util/atomic.h>

#include "board.h"

#define UBRR_VALUE ((F_CPU + 4u * BOARD_BAUD) / (8u * BOARD_BAUD) - 1u) /* double speed */

static volatile uint8_t rx_ring[BOARD_RX_RING];
static volatile uint8_t rx_head; /* written by the interrupt */
static volatile uint8_t rx_tail; /* written by the main loop */
static volatile uint8_t tx_ring[BOARD_TX_RING];
static volatile uint8_t tx_head; /* written by the main loop */
static volatile uint8_t tx_tail; /* written by the interrupt */
static volatile uint16_t rx_overruns;

#define RX_MASK ((uint8_t)(BOARD_RX_RING - 1u))
#define TX_MASK ((uint8_t)(BOARD_TX_RING - 1u))

void uart_init(void)
{
    UART_UBRR = UBRR_VALUE;
    UART_UCSRA = (uint8_t)(1u << UART_U2X);
    UART_UCSRC = UART_UCSZ;
    UART_UCSRB = (uint8_t)((1u << UART_RXEN) | (1u << UART_TXEN) | (1u << UART_RXCIE));
}

ISR(UART_RX_VECT)
{
    uint8_t byte = UART_UDR;
    uint8_t next = (uint8_t)((rx_head + 1u) & RX_MASK);
    if (next == rx_tail) {
        rx_overruns++;
        return;
    }
    rx_ring[rx_head] = byte;
    rx_head = next;
}

ISR(UART_UDRE_VECT)
{
    uint8_t tail = tx_tail;
    if (tail == tx_head) {
        UART_UCSRB &= (uint8_t)~(1u << UART_UDRIE);
        return;
    }
    UART_UDR = tx_ring[tail];
    tx_tail = (uint8_t)((tail + 1u) & TX_MASK);
}

uint8_t uart_read(uint8_t *byte)
{
    uint8_t tail = rx_tail;
    if (tail == rx_head) {
        return 0;
    }
    *byte = rx_ring[tail];
    rx_tail = (uint8_t)((tail + 1u) & RX_MASK);
    return 1;
}

uint8_t uart_write(const uint8_t *data, uint16_t n)
{
    uint8_t head = tx_head;
    uint8_t used = (uint8_t)((head - tx_tail) & TX_MASK);
    if (n > (uint16_t)(TX_MASK - used)) {
        return 0;
    }
    for (uint16_t i = 0; i < n; i++) {
        tx_ring[head] = data[i];
        head = (uint8_t)((head + 1u) & TX_MASK);
    }
    tx_head = head;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        UART_UCSRB |= (uint8_t)(1u << UART_UDRIE);
    }
    return 1;
}

uint16_t uart_rx_overruns(void)
{
    uint16_t n;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        n = rx_overruns;
    }
    return n;
}

uint8_t uart_pending(void)
{
    return rx_tail != rx_head;
}
