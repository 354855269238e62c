/**
 * The admin API's tokens: REFVID_ADMIN_TOKEN (named `admin`) and the named tokens of
 * REFVID_ADMIN_TOKENS (`alice:<token>,bob:<token>`). The audit log records each change with the
 * name of the token that made it.
 */
import { ConfigError } from "./config-error.js";

export interface AdminToken {
  name: string;
  token: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MIN_TOKEN_LENGTH = 16;

export function parseAdminTokens(single: string | undefined, named: string | undefined): AdminToken[] {
  const tokens: AdminToken[] = single ? [{ name: "admin", token: single }] : [];
  const problems: string[] = [];
  for (const [index, part] of (named ?? "").split(",").entries()) {
    const item = part.trim();
    if (item === "") continue;
    const colon = item.indexOf(":");
    const name = colon < 0 ? "" : item.slice(0, colon);
    const token = colon < 0 ? "" : item.slice(colon + 1);
    const where = `REFVID_ADMIN_TOKENS item ${index + 1}`;
    if (!NAME.test(name))
      problems.push(`${where}: must be name:token, the name of letters, digits, . _ or -`);
    else if (token.length < MIN_TOKEN_LENGTH)
      problems.push(`${where} (${name}): the token must be at least ${MIN_TOKEN_LENGTH} characters`);
    else if (tokens.some((t) => t.name === name))
      problems.push(`${where}: the name ${name} is used twice (REFVID_ADMIN_TOKEN is named admin)`);
    else if (tokens.some((t) => t.token === token))
      problems.push(`${where} (${name}): the token is another name's too; each name needs its own`);
    else tokens.push({ name, token });
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  return tokens;
}
