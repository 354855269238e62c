/** A catalog file refused: the message names the file and each of its problems. */
export class CatalogError extends Error {}
