/**
 * The HTTP server for the Express app, built so that Express never changes a request's prototype.
 *
 * Express gives every request and response its own methods by setting their prototype to
 * `app.request` and `app.response` (`Object.setPrototypeOf` in `app.handle`). Changing the
 * prototype of a live object is about the slowest thing V8 does: each request gets new hidden
 * classes, and the garbage they leave outlives the young generation. Here Node's server makes each
 * request and response an instance of a class whose prototype already is `app.request` and
 * `app.response` (the `IncomingMessage` and `ServerResponse` options of `http.createServer`), so
 * Express's call finds the prototype it wants and changes nothing. The approach is the one
 * proposed upstream in expressjs/express#5998. Measured in docs/decisions.md, "Hot path".
 */
import { createServer, IncomingMessage, type Server, ServerResponse } from "node:http";
import type { Express } from "express";

/**
 * Gives `base`'s subclass every property Express's `source` prototype chain adds above `base`,
 * nearest last so that an app's own properties (`app`) win over Express's defaults.
 */
function adopt(target: object, source: object, base: object): void {
  const chain: object[] = [];
  for (let o: object | null = source; o !== base; o = Object.getPrototypeOf(o)) {
    if (o === null) throw new Error("Express's request or response does not inherit from Node's own");
    chain.unshift(o);
  }
  for (const o of chain) Object.defineProperties(target, Object.getOwnPropertyDescriptors(o));
}

/** An HTTP server for `app` whose requests and responses are born with Express's prototypes. */
export function createExpressServer(app: Express): Server {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  adopt(ExpressRequest.prototype, app.request, IncomingMessage.prototype);
  adopt(ExpressResponse.prototype, app.response, ServerResponse.prototype);
  app.request = ExpressRequest.prototype as Express["request"];
  app.response = ExpressResponse.prototype as Express["response"];
  return createServer({ IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse }, app);
}
