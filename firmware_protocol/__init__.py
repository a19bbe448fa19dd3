"""The wire protocol to the stepper-motor firmware."""
