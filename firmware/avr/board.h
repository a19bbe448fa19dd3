/*
 * board.h - the board file chosen at build time (make BOARD=mega2560_ramps | uno_cnc passes
 * -DBOARD_FILE=\"../boards/<board>.h\") and checks of its facts against <avr/io.h>.
 */
#ifndef CUBEROBOT_AVR_BOARD_H
#define CUBEROBOT_AVR_BOARD_H

#include <avr/io.h>

#include BOARD_FILE

#if BOARD_F_CPU != F_CPU
#error "the board file's BOARD_F_CPU differs from the F_CPU the Makefile passes"
#endif

/* Extra cycles of STEP-high time on top of the interrupt's own work (pulse >= 2 us). */
#ifndef STEP_PULSE_PAD_CYCLES
#define STEP_PULSE_PAD_CYCLES 0
#endif

#if defined(__AVR_ATmega2560__)
#define UART_RX_VECT USART0_RX_vect
#define UART_UDRE_VECT USART0_UDRE_vect
#define UART_UDR UDR0
#define UART_UCSRA UCSR0A
#define UART_UCSRB UCSR0B
#define UART_UCSRC UCSR0C
#define UART_UBRR UBRR0
#define UART_U2X U2X0
#define UART_RXEN RXEN0
#define UART_TXEN TXEN0
#define UART_RXCIE RXCIE0
#define UART_UDRIE UDRIE0
#define UART_UCSZ ((1u << UCSZ01) | (1u << UCSZ00))
_Static_assert(BOARD_VEC_UART_RX == USART0_RX_vect_num, "board file: UART RX vector");
_Static_assert(BOARD_VEC_UART_UDRE == USART0_UDRE_vect_num, "board file: UDRE vector");
#elif defined(__AVR_ATmega328P__)
#define UART_RX_VECT USART_RX_vect
#define UART_UDRE_VECT USART_UDRE_vect
#define UART_UDR UDR0
#define UART_UCSRA UCSR0A
#define UART_UCSRB UCSR0B
#define UART_UCSRC UCSR0C
#define UART_UBRR UBRR0
#define UART_U2X U2X0
#define UART_RXEN RXEN0
#define UART_TXEN TXEN0
#define UART_RXCIE RXCIE0
#define UART_UDRIE UDRIE0
#define UART_UCSZ ((1u << UCSZ01) | (1u << UCSZ00))
_Static_assert(BOARD_VEC_UART_RX == USART_RX_vect_num, "board file: UART RX vector");
_Static_assert(BOARD_VEC_UART_UDRE == USART_UDRE_vect_num, "board file: UDRE vector");
#else
#error "no UART mapping for this MCU"
#endif

_Static_assert(BOARD_VEC_STEP_A == TIMER1_COMPA_vect_num, "board file: TIMER1_COMPA vector");
_Static_assert(BOARD_VEC_STEP_B == TIMER1_COMPB_vect_num, "board file: TIMER1_COMPB vector");
_Static_assert(BOARD_VEC_TICK == TIMER0_COMPA_vect_num, "board file: TIMER0_COMPA vector");
_Static_assert((BOARD_RX_RING & (BOARD_RX_RING - 1)) == 0, "RX ring: a power of two");
_Static_assert((BOARD_TX_RING & (BOARD_TX_RING - 1)) == 0, "TX ring: a power of two");
_Static_assert(BOARD_RX_RING <= 256 && BOARD_TX_RING <= 256, "rings index with a u8");

#endif
