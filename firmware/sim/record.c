/*
 * record.c - pin and interrupt recording for the emulator harness (see record.h).
 */
#include "record.h"

#include <string.h>

#include <avr_ioport.h>
#include <sim_irq.h>

#include BOARD_FILE

#define RETI_OPCODE 0x9518u
#define STR_(x) #x
#define STR(x) STR_(x)
/* "F, 0" -> port letter and bit */
#define PIN_LETTER_(letter, bit) (STR(letter)[0])
#define PIN_BIT_(letter, bit) (bit)
#define PIN_LETTER(...) PIN_LETTER_(__VA_ARGS__)
#define PIN_BIT(...) PIN_BIT_(__VA_ARGS__)

enum pin_kind { KIND_STEP = 'S', KIND_DIR = 'D', KIND_ENABLE = 'E', KIND_ESTOP = 'X' };

struct watch {
    struct recorder *rec;
    char kind;
    uint8_t motors; /* motor number for S/D, mask for E */
    char port;
    uint8_t bit;
    int level;      /* last level seen, -1 = unknown */
};

#define MAX_WATCHES 24
static struct watch watches[MAX_WATCHES];
static int n_watches;

void record_init(struct recorder *rec, avr_t *avr, FILE *out)
{
    memset(rec, 0, sizeof *rec);
    rec->avr = avr;
    rec->out = out;
    rec->response = strcmp(avr->mmcu, "atmega2560") == 0 ? 5 : 4; /* 3- or 2-byte PC push */
}

uint64_t record_now(const struct recorder *rec)
{
    return rec->base + rec->avr->cycle;
}

static void on_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    struct watch *w = param;
    int level = value ? 1 : 0;
    if (level == w->level) {
        return;
    }
    w->level = level;
    struct recorder *rec = w->rec;
    if (!rec->out) {
        return;
    }
    unsigned long long now = (unsigned long long)record_now(rec);
    if (w->kind == KIND_ESTOP) {
        fprintf(rec->out, "X %llu %d\n", now, level);
    } else {
        fprintf(rec->out, "%c %llu %u %d\n", w->kind, now, w->motors, level);
    }
}

static struct watch *find_watch(char kind, char port, uint8_t bit)
{
    for (int i = 0; i < n_watches; i++) {
        struct watch *w = &watches[i];
        if (w->kind == kind && w->port == port && w->bit == bit) {
            return w;
        }
    }
    return NULL;
}

static void watch(struct recorder *rec, char kind, uint8_t motor, char port, uint8_t bit)
{
    struct watch *w = find_watch(kind, port, bit);
    if (w && kind == KIND_ENABLE) {
        w->motors |= (uint8_t)(1u << motor); /* a shared enable pin */
        return;
    }
    if (n_watches == MAX_WATCHES) {
        fprintf(stderr, "harness: too many pins to watch\n");
        return;
    }
    w = &watches[n_watches++];
    w->rec = rec;
    w->kind = kind;
    w->motors = kind == KIND_ENABLE ? (uint8_t)(1u << motor) : motor;
    w->port = port;
    w->bit = bit;
    w->level = -1;
    avr_irq_t *irq = avr_io_getirq(rec->avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
    if (!irq) {
        fprintf(stderr, "harness: no port %c on this MCU\n", port);
        return;
    }
    avr_irq_register_notify(irq, on_pin, w);
}

#define WATCH_MOTOR(m)                                                                        \
    do {                                                                                      \
        watch(rec, KIND_STEP, m, PIN_LETTER(M##m##_STEP), PIN_BIT(M##m##_STEP));              \
        watch(rec, KIND_DIR, m, PIN_LETTER(M##m##_DIR), PIN_BIT(M##m##_DIR));                 \
        watch(rec, KIND_ENABLE, m, PIN_LETTER(M##m##_EN), PIN_BIT(M##m##_EN));                \
    } while (0)

void record_watch_pins(struct recorder *rec)
{
#ifdef M0_STEP
    WATCH_MOTOR(0);
#endif
#ifdef M1_STEP
    WATCH_MOTOR(1);
#endif
#ifdef M2_STEP
    WATCH_MOTOR(2);
#endif
#ifdef M3_STEP
    WATCH_MOTOR(3);
#endif
#ifdef M4_STEP
    WATCH_MOTOR(4);
#endif
#ifdef M5_STEP
    WATCH_MOTOR(5);
#endif
    watch(rec, KIND_ESTOP, 0, PIN_LETTER(BOARD_ESTOP), PIN_BIT(BOARD_ESTOP));
}

static const struct {
    int vector;
    const char *name;
} known_vectors[] = {
    {BOARD_VEC_STEP_A, "step_a"},   {BOARD_VEC_STEP_B, "step_b"},
    {BOARD_VEC_TICK, "tick"},       {BOARD_VEC_UART_RX, "uart_rx"},
    {BOARD_VEC_UART_UDRE, "uart_udre"}, {BOARD_VEC_ESTOP, "estop"},
};
#define N_KNOWN ((int)(sizeof known_vectors / sizeof known_vectors[0]))

/* The firmware's vector being entered at pc, or 0.  Only the vectors the firmware uses count:
 * on a small MCU the start-up code sits at addresses a larger vector table would cover. */
static int vector_at(const avr_t *avr, uint32_t pc)
{
    for (int i = 0; i < N_KNOWN; i++) {
        if (pc == (uint32_t)known_vectors[i].vector * avr->vector_size) {
            return known_vectors[i].vector;
        }
    }
    return 0;
}

static int is_reti(const avr_t *avr, uint32_t pc)
{
    uint16_t op = (uint16_t)(avr->flash[pc] | (avr->flash[pc + 1] << 8));
    return op == RETI_OPCODE;
}

static void note_reset(struct recorder *rec)
{
    rec->last_cycle = 0;
    rec->in_isr = 0;
    rec->resets++;
    if (rec->out) {
        fprintf(rec->out, "R %llu\n", (unsigned long long)record_now(rec));
    }
    for (int i = 0; i < n_watches; i++) {
        watches[i].level = -1; /* pins float after a reset */
    }
}

void record_reset(struct recorder *rec)
{
    rec->base += rec->avr->cycle;
    avr_reset(rec->avr);
    note_reset(rec);
}

int record_step(struct recorder *rec)
{
    avr_t *avr = rec->avr;
    uint32_t pc = avr->pc;
    int reti = 0;
    if (!rec->in_isr) {
        rec->in_isr = vector_at(avr, pc);
        rec->isr_start = record_now(rec);
    } else {
        reti = is_reti(avr, pc);
    }
    int state = avr_run(avr);
    if (avr->cycle < rec->last_cycle) { /* the MCU reset itself (hardware watchdog) */
        rec->base += rec->last_cycle;
        note_reset(rec);
    } else if (reti) {
        struct isr_stats *st = &rec->isr[rec->in_isr];
        uint64_t took = record_now(rec) - rec->isr_start + rec->response;
        st->count++;
        st->total_cycles += took;
        st->max_cycles = took > st->max_cycles ? took : st->max_cycles;
        rec->in_isr = 0;
    }
    rec->last_cycle = avr->cycle;
    return state;
}

void record_write_stats(const struct recorder *rec, FILE *out, double max_lag_ms,
                        uint64_t rx_bytes, uint64_t tx_bytes)
{
    fprintf(out, "{\"board\": \"%s\", \"cycles\": %llu, \"f_cpu\": %lu, \"resets\": %u,\n",
            BOARD_NAME, (unsigned long long)record_now(rec), (unsigned long)BOARD_F_CPU,
            rec->resets);
    fprintf(out, " \"max_lag_ms\": %.3f, \"rx_bytes\": %llu, \"tx_bytes\": %llu,\n", max_lag_ms,
            (unsigned long long)rx_bytes, (unsigned long long)tx_bytes);
    fprintf(out, " \"isr\": {");
    for (int i = 0; i < N_KNOWN; i++) {
        const struct isr_stats *st = &rec->isr[known_vectors[i].vector];
        fprintf(out, "%s\"%s\": {\"count\": %llu, \"max_cycles\": %llu, \"total_cycles\": %llu}",
                i ? ", " : "", known_vectors[i].name, (unsigned long long)st->count,
                (unsigned long long)st->max_cycles, (unsigned long long)st->total_cycles);
    }
    fprintf(out, "}}\n");
}
