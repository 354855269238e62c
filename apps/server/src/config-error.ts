/** A configuration that cannot work: the message names each bad variable and stops the start. */
export class ConfigError extends Error {}
