/*
 * pins.h - port access from the board files' "LETTER, BIT" pin notation.
 *
 *   #define M0_STEP F, 0      ->  PIN_PORT(M0_STEP) is PORTF, PIN_MASK(M0_STEP) is 1 << 0
 */
#ifndef CUBEROBOT_PINS_H
#define CUBEROBOT_PINS_H

#include <avr/io.h>

#define PIN_PORT_(letter, bit) PORT##letter
#define PIN_DDR_(letter, bit) DDR##letter
#define PIN_IN_(letter, bit) PIN##letter
#define PIN_MASK_(letter, bit) ((uint8_t)(1u << (bit)))

/* Variadic, so that a pin macro expanded early ("F, 0") still reaches the two-argument form. */
#define PIN_PORT(...) PIN_PORT_(__VA_ARGS__)
#define PIN_DDR(...) PIN_DDR_(__VA_ARGS__)
#define PIN_IN(...) PIN_IN_(__VA_ARGS__)
#define PIN_MASK(...) PIN_MASK_(__VA_ARGS__)

#endif
