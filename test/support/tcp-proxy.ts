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
  /** Connections `strand` cut off: what they send goes nowhere. */
  private readonly stranded = new WeakSet<net.Socket>();
  /** Each client connection's socket to the server. */
  private readonly upstreams = new Map<net.Socket, net.Socket>();
  private frozen = false;
  /** New connections still to strand as they are accepted (see strandNew). */
  private toStrand = 0;
  port = 0;
  /** Connections accepted since start. */
  accepted = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free local port (`port`). */
  async start(): Promise<void> {
    // Half-open sockets: a side's FIN is held while frozen too, as a network that drops packets
    // would (a client that ends a connection does not see it close until the other side answers).
    this.server = net.createServer({ allowHalfOpen: true }, (client) => {
      this.accepted++;
      const upstream = net.connect({ port: this.targetPort, host: this.host, allowHalfOpen: true });
      const forward = (from: net.Socket, to: net.Socket) => {
        const pass = (send: () => void) => {
          if (this.stranded.has(client)) return;
          if (this.frozen) this.held.push(send);
          else send();
        };
        from.on('data', (chunk) => pass(() => to.write(chunk)));
        from.on('end', () => pass(() => to.end()));
      };
      forward(client, upstream);
      forward(upstream, client);
      if (this.toStrand > 0) {
        this.toStrand--;
        this.stranded.add(client);
        upstream.destroy();
      }
      this.clients.add(client);
      for (const event of ['end', 'error', 'close']) client.once(event, () => this.clients.delete(client));
      this.upstreams.set(client, upstream);
      const close = (side: net.Socket) => {
        // A stranded client is not told: its server went away without a word reaching it.
        for (const s of side === upstream && this.stranded.has(client) ? [upstream] : [client, upstream]) {
          s.destroy();
          this.sockets.delete(s);
        }
        if (client.destroyed) this.upstreams.delete(client);
      };
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => close(s));
        s.on('close', () => close(s));
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

  /**
   * The connections open now are half-open, as when their server's host is gone (a failover):
   * the server side is closed (its transactions rolled back, their locks gone), and nothing
   * reaches the client any more, not even that. New connections go through as before (the new
   * server answers).
   */
  strand(): void {
    for (const client of this.clients) {
      this.stranded.add(client);
      this.upstreams.get(client)?.destroy();
    }
  }

  /**
   * The next `count` connections are accepted and then answered by nothing, as behind a load
   * balancer whose server is gone: their handshake never completes.
   */
  strandNew(count: number): void {
    this.toStrand = count;
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
