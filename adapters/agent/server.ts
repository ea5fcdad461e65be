import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AppError } from '../../kernel/errors.js';
import type { Cradle } from '../runtime.js';

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The agent (data plane) on plain node:http. Today it answers its probe,
 * `GET /__understudy/health` (mode, services bound, library version), which the control plane
 * reads for `/v1/mode` and `/health`. Routing, recording, mocking and webhook capture are not
 * built yet: every other request answers 501 `not_implemented`.
 * @public
 */
export function createAgentServer(cradle: Pick<Cradle, 'tenant' | 'modeCache' | 'servicesCache' | 'changes' | 'logger'>): Server {
  const { tenant, modeCache, servicesCache, changes, logger } = cradle;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/__understudy/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      const [mode, services] = await Promise.all([modeCache.get(tenant), servicesCache.get(tenant)]);
      send(res, 200, { status: 'ok', mode, services_bound: services.length, library_version: changes.version(tenant, 'library') });
      return;
    }
    req.resume();
    send(res, 501, new AppError('not_implemented', 'the agent does not route, record or mock traffic yet').toBody());
  };
  return createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, 'agent request failed');
      if (!res.headersSent) send(res, 500, new AppError('internal_error').toBody());
      else res.destroy();
    });
  });
}
