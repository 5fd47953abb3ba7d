import net from 'node:net';

/**
 * A TCP proxy in front of a database server that can stop answering without closing anything
 * (`freeze`: bytes are held, in order, both ways; connections stay open, as with a hung server or
 * a network that drops packets) and answer again (`thaw`: what was held goes through).
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly clients = new Set<net.Socket>();
  private held: Array<() => void> = [];
  private frozen = false;
  port = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free local port (`port`). */
  async start(): Promise<void> {
    // Half-open sockets: a side's FIN is held while frozen too, as a network that drops packets
    // would (a client that ends a connection does not see it close until the other side answers).
    this.server = net.createServer({ allowHalfOpen: true }, (client) => {
      const upstream = net.connect({ port: this.targetPort, host: this.host, allowHalfOpen: true });
      const forward = (from: net.Socket, to: net.Socket) => {
        from.on('data', (chunk) => (this.frozen ? this.held.push(() => to.write(chunk)) : to.write(chunk)));
        from.on('end', () => (this.frozen ? this.held.push(() => to.end()) : to.end()));
      };
      forward(client, upstream);
      forward(upstream, client);
      this.clients.add(client);
      for (const event of ['end', 'error', 'close']) client.once(event, () => this.clients.delete(client));
      const close = () => {
        for (const s of [client, upstream]) {
          s.destroy();
          this.sockets.delete(s);
        }
      };
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', close);
        s.on('close', close);
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections the client (the application) has not ended or reset yet. */
  get openConnections(): number {
    return this.clients.size;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    const held = this.held;
    this.held = [];
    for (const send of held) send();
  }

  async stop(): Promise<void> {
    this.thaw();
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}
