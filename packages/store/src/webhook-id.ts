/** One event per run: its webhook id is `msg_` and the run's uuid, the same in every store. */
export const webhookIdOf = (runId: string) => `msg_${runId.slice("run_".length)}`;
