import type { Service } from '../../kernel/domain/index.js';

/** Where a request goes: its service and the URI to send upstream (prefix stripped). */
export interface Route {
  service: Service;
  /** Path and query as the upstream sees them. */
  uri: string;
  path: string;
  search: string;
}

/** What the router looked at, for the 404 that names it. */
export interface RouteMiss {
  host: string;
  path: string;
}

/**
 * Binds requests to services: by hostname (Host header, or the host of an absolute-form proxy
 * request; port ignored, case-insensitive), else by the longest path prefix that matches whole
 * leading segments, which is stripped before forwarding.
 * @public
 */
export class ServiceRouter {
  readonly #hosts = new Map<string, Service>();
  readonly #prefixes: Service[];

  constructor(services: readonly Service[]) {
    for (const s of services) if (s.routing_type === 'hostname') this.#hosts.set(s.routing_value.toLowerCase(), s);
    this.#prefixes = services.filter((s) => s.routing_type === 'path_prefix').sort((a, b) => b.routing_value.length - a.routing_value.length);
  }

  get size(): number {
    return this.#hosts.size + this.#prefixes.length;
  }

  /** `rawUrl` is the request target (origin-form `/p?q` or absolute-form `http://h/p?q`). */
  resolve(rawUrl: string, hostHeader: string | undefined): Route | RouteMiss {
    let host = hostHeader ?? '';
    let target = rawUrl;
    if (!rawUrl.startsWith('/')) {
      try {
        const u = new URL(rawUrl);
        host = u.host;
        target = `${u.pathname}${u.search}`;
      } catch {
        return { host, path: rawUrl };
      }
    }
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const search = q === -1 ? '' : target.slice(q);
    const hostname = host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
    const byHost = this.#hosts.get(hostname);
    if (byHost) return { service: byHost, uri: target, path, search };
    for (const s of this.#prefixes) {
      const p = s.routing_value;
      if (path === p || path.startsWith(`${p}/`)) {
        const rest = path.slice(p.length) || '/';
        return { service: s, uri: `${rest}${search}`, path: rest, search };
      }
    }
    return { host: hostname, path };
  }

  /** Human list of the bindings, for the 404. */
  describe(): string {
    const hosts = [...this.#hosts.keys()];
    const prefixes = this.#prefixes.map((s) => s.routing_value);
    return `hostnames [${hosts.join(', ')}], path prefixes [${prefixes.join(', ')}]`;
  }
}
