import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * "Lingering close", as nginx does it, for answers given before the client finished sending its
 * body (413 on a declared length, a file over the allowance, a body parser's refusal).
 *
 * After such an answer with `Connection: close`, Node's http server calls `socket.destroySoon()`:
 * end() now, destroy() on the socket's 'finish'. Closing a socket whose receive buffer still
 * holds bytes, or that keeps receiving them, makes the kernel send a TCP RST; the client, still
 * uploading, then fails its next write (EPIPE/ECONNRESET) and most clients (Node's, browsers')
 * give up without reading the answer that had already arrived; some kernels drop it outright.
 *
 * Instead the socket is half-closed (FIN after the answer) and what the client still sends is
 * read and thrown away, until the client closes its side or LINGER_MS passes, whichever comes
 * first; then it is destroyed. The timer bounds what a slow or endless client can hold.
 */

/** Long enough for a client to notice the answer and stop; short enough that nobody holds a socket. */
export const LINGER_MS = 5000;

const lingering = new WeakSet<Socket>();

/** Whether the socket is in its lingering close (its parser errors are then nobody's business). */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

/**
 * Called while `res` is being answered with `Connection: close`: once it has gone out, if the
 * request body has not arrived in full, the socket lingers instead of being destroyed. Our
 * 'finish' listener runs after Node's own (registered when the request arrived), so the destroy
 * that destroySoon queued is there to be taken back.
 */
export function lingerAfterAnswer(res: ServerResponse, lingerMs = LINGER_MS): void {
  res.once('finish', () => {
    const req = res.req;
    // The whole body was read: nothing more is coming, Node's own close is right.
    if (req.complete) return;
    lingerNow(req.socket, req, lingerMs);
  });
}

/**
 * For a socket whose current answer keeps its connection but must not (a drained body that
 * passed the limit): once that answer is out, the socket ends and lingers.
 */
export function closeAfterAnswer(socket: Socket, lingerMs = LINGER_MS): void {
  // Node's own pointer to the response being written on this socket (null once it finished).
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (res !== null && res !== undefined && !res.writableFinished) {
    if (!res.headersSent) res.setHeader('connection', 'close');
    res.once('finish', () => lingerNow(socket, res.req, lingerMs));
    return;
  }
  lingerNow(socket, undefined, lingerMs);
}

/**
 * Half-closes now (after whatever is queued for writing: `data`, then the FIN) and lingers. For
 * answers written straight to the socket (src/errors/handler.ts, clientErrorHandler).
 */
export function endLingering(socket: Socket, data?: string, lingerMs = LINGER_MS): void {
  if (data !== undefined) socket.end(data);
  lingerNow(socket, undefined, lingerMs);
}

function lingerNow(socket: Socket, req: IncomingMessage | undefined, lingerMs: number): void {
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  // destroySoon's `once('finish', this.destroy)`; removeListener finds once-wrappers too.
  socket.removeListener('finish', socket.destroy);
  if (!socket.writableEnded) socket.end();
  const stop = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(stop, lingerMs);
  timer.unref();
  socket.once('end', stop);
  socket.once('close', () => clearTimeout(timer));
  // Keep reading: Node's parser consumes the socket and drops body bytes of a request whose
  // answer is gone; a request left paused (the form reader stops reading) must flow again, its
  // data going to no listener.
  req?.resume();
  socket.resume();
}
