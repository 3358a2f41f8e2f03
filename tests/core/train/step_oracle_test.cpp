// The training step against python3-torch (tests/oracles/train_step.py): loss, pre-clip grad norm and
// learning rate per step, and the final weights, with gradient accumulation, clipping and the scheduler.
