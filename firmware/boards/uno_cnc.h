/*
 * Board: Arduino Uno / Nano (ATmega328P, 16 MHz) with a CNC shield V3: four step/dir drivers
 * (X Y Z, and A cloned to D12/D13), one shared enable (D8), A4988 at 1/16 microstepping.  For
 * the turntable / flipper robots and five-motor robots that drive four faces: U R D L.
 *
 * Plain data: the firmware (avr/) and the emulator harness (sim/) both read it.  Pins are a port
 * letter and a bit.  Face codes: U=0 R=1 F=2 D=3 L=4 B=5; F and B have no motor here and their
 * moves are refused with NAK BAD_MOVE.
 */
#ifndef CUBEROBOT_BOARD_H
#define CUBEROBOT_BOARD_H

#define BOARD_NAME "uno-cnc"
#define BOARD_MCU_NAME "atmega328p"
#define BOARD_F_CPU 16000000UL
#define BOARD_MOTOR_MASK 0x1B /* U R D L */

#define BOARD_FULL_STEPS_PER_REV 200
#define BOARD_MICROSTEPS 16
#define BOARD_MAX_SPEED_DPS 1500   /* 13 333 steps/s */
#define BOARD_ACCEL_DPS2 40000
#define BOARD_SETTLE_US 5000
#define BOARD_HOME_MS 300
#define BOARD_DIR_INVERT_MASK 0x00
#define BOARD_ENABLE_ACTIVE_LOW 1

#define BOARD_QUEUE_DEPTH 16
#define BOARD_MAX_BATCH 16
#define BOARD_RX_RING 64
#define BOARD_TX_RING 128

#define BOARD_BAUD 115200UL

/* U = X axis, R = Y, D = Z, L = A (cloned on D12/D13); one enable pin for all (D8) */
#define M0_STEP D, 2 /* X step D2 */
#define M0_DIR D, 5  /* X dir  D5 */
#define M0_EN B, 0   /* D8 (shared) */
#define M1_STEP D, 3 /* Y step D3 */
#define M1_DIR D, 6  /* Y dir  D6 */
#define M1_EN B, 0
#define M3_STEP D, 4 /* Z step D4 */
#define M3_DIR D, 7  /* Z dir  D7 */
#define M3_EN B, 0
#define M4_STEP B, 4 /* A step D12 */
#define M4_DIR B, 5  /* A dir  D13 */
#define M4_EN B, 0
#define BOARD_SHARED_ENABLE 1

/* e-stop: the shield's Abort input, A0 = PC0 = PCINT8, active low with the internal pull-up */
#define BOARD_ESTOP C, 0
#define BOARD_ESTOP_PCINT 8

#define BOARD_VEC_STEP_A 11  /* TIMER1_COMPA */
#define BOARD_VEC_STEP_B 12  /* TIMER1_COMPB */
#define BOARD_VEC_TICK 14    /* TIMER0_COMPA */
#define BOARD_VEC_UART_RX 18 /* USART_RX */
#define BOARD_VEC_UART_UDRE 19 /* USART_UDRE */
#define BOARD_VEC_ESTOP 4    /* PCINT1 */

#endif
