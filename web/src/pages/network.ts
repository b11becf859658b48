// Network management over the network API: subnets (list, create, delete, allocation), ports (list,
// create, delete) and the reachability check between two ports. URL state: tenant filter.
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { del, get, post, query } from '../api';
import { clearError, el, field, setStatus, showError, table } from '../dom';

interface Pool { start: string; end: string }
interface Subnet { id: string; name: string; tenant: string; cidr: string; ip_version: number; gateway_ip: string | null; allocation_pools: Pool[]; mtu: number; port_count: number }
interface Port { id: string; name: string; subnet_id: string; tenant: string; host: string; npu: number; ip_address: string; fixed_ip: boolean }
interface Host { name: string; npus: { index: number }[] }
interface Reach { reachable: boolean; reason: string }

// Addresses in an IPv4 pool (IPv6 pools are counted as "large").
function poolSize(p: Pool): number | null {
  const v4 = (s: string): number | null => {
    const parts = s.split('.').map(Number);
    if (parts.length !== 4 || parts.some((x) => !Number.isInteger(x))) return null;
    return (((parts[0] ?? 0) * 256 + (parts[1] ?? 0)) * 256 + (parts[2] ?? 0)) * 256 + (parts[3] ?? 0);
  };
  const a = v4(p.start);
  const b = v4(p.end);
  return a === null || b === null ? null : b - a + 1;
}

export async function renderNetwork(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  const tenant = params.get('tenant') ?? '';
  const reload = (): void => navigate(`#/network${tenant ? `?tenant=${encodeURIComponent(tenant)}` : ''}`);
  const [subnets, ports, hosts] = await Promise.all([
    get<{ items: Subnet[] }>(`/api/v1/subnets${query({ tenant })}`),
    get<{ items: Port[] }>(`/api/v1/ports${query({ tenant })}`),
    get<{ items: Host[] }>('/api/v1/hosts'),
  ]);
  main.append(el('h1', {}, 'Network'));

  // Tenant filter (kept in the URL).
  const tenantInput = el('input', { id: 'tenant-filter', value: tenant });
  const filter = el('form', { class: 'inline', 'aria-label': 'Filter' }, field('Tenant', tenantInput), el('button', { type: 'submit', class: 'secondary' }, 'Filter'));
  filter.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const t = tenantInput.value.trim();
    navigate(`#/network${t ? `?tenant=${encodeURIComponent(t)}` : ''}`);
  });
  main.append(filter);

  const act = (what: string, fn: () => Promise<unknown>): void => {
    clearError();
    void fn().then(() => { setStatus(what); reload(); }, (e: unknown) => showError(e));
  };

  // Subnets.
  main.append(el('h2', {}, 'Subnets'));
  const subnetRows = subnets.items.map((s) => {
    const pooled = s.allocation_pools.map(poolSize);
    const total = pooled.every((n) => n !== null) ? pooled.reduce<number>((a, n) => a + (n ?? 0), 0) : null;
    const remove = el('button', { type: 'button', class: 'danger', 'aria-label': `Delete subnet ${s.name}` }, 'Delete');
    remove.addEventListener('click', () => act(`Subnet ${s.name} deleted`, () => del(`/api/v1/subnets/${s.id}`)));
    return [s.name, s.tenant, s.cidr, s.gateway_ip, s.allocation_pools.map((p) => `${p.start}–${p.end}`).join(', '),
      total === null ? `${s.port_count} ports` : `${s.port_count} of ${total} (${((100 * s.port_count) / Math.max(1, total)).toFixed(1)} %)`, s.mtu, remove];
  });
  main.append(table('Subnets', ['name', 'tenant', 'CIDR', 'gateway', 'pools', 'allocated', 'MTU', 'actions'], subnetRows, 'No subnets yet.'));

  const sName = el('input', { id: 'subnet-name', required: true });
  const sCidr = el('input', { id: 'subnet-cidr', required: true, placeholder: '198.18.0.0/24' });
  const sTenant = el('input', { id: 'subnet-tenant', required: true, value: tenant });
  const sGateway = el('input', { id: 'subnet-gateway', placeholder: 'optional' });
  const sStart = el('input', { id: 'subnet-pool-start', placeholder: 'optional' });
  const sEnd = el('input', { id: 'subnet-pool-end', placeholder: 'optional' });
  const subnetForm = el('form', { class: 'inline', 'aria-labelledby': 'create-subnet' },
    field('Name', sName), field('CIDR', sCidr), field('Tenant', sTenant), field('Gateway', sGateway),
    field('Pool start', sStart), field('Pool end', sEnd), el('button', { type: 'submit' }, 'Create subnet'));
  subnetForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = { name: sName.value.trim(), cidr: sCidr.value.trim(), tenant: sTenant.value.trim() };
    if (sGateway.value.trim()) body['gateway_ip'] = sGateway.value.trim();
    if (sStart.value.trim() || sEnd.value.trim()) body['allocation_pools'] = [{ start: sStart.value.trim(), end: sEnd.value.trim() }];
    act(`Subnet ${String(body['name'])} created`, () => post('/api/v1/subnets', body));
  });
  main.append(el('h3', { id: 'create-subnet' }, 'Create a subnet'), subnetForm);

  // Ports.
  main.append(el('h2', {}, 'Ports'));
  const subnetName = new Map(subnets.items.map((s) => [s.id, s.name]));
  main.append(table('Ports', ['name', 'host', 'NPU', 'subnet', 'address', 'fixed', 'actions'], ports.items.map((p) => {
    const remove = el('button', { type: 'button', class: 'danger', 'aria-label': `Delete port ${p.ip_address} of ${p.host}` }, 'Delete');
    remove.addEventListener('click', () => act(`Port ${p.ip_address} deleted`, () => del(`/api/v1/ports/${p.id}`)));
    return [p.name, el('a', { href: `#/host/${encodeURIComponent(p.host)}` }, p.host), p.npu, subnetName.get(p.subnet_id) ?? p.subnet_id, p.ip_address, p.fixed_ip ? 'yes' : 'no', remove];
  }), 'No ports yet.'));

  const pSubnet = el('select', { id: 'port-subnet', required: true }, ...subnets.items.map((s) => el('option', { value: s.id }, `${s.name} (${s.cidr})`)));
  const pHost = el('select', { id: 'port-host', required: true }, ...hosts.items.map((h) => el('option', { value: h.name }, h.name)));
  const pNpu = el('input', { id: 'port-npu', type: 'number', min: '0', value: '0', required: true });
  const pIp = el('input', { id: 'port-ip', placeholder: 'allocated when empty' });
  const portForm = el('form', { class: 'inline', 'aria-labelledby': 'create-port' },
    field('Subnet', pSubnet), field('Host', pHost), field('NPU', pNpu), field('Address', pIp), el('button', { type: 'submit' }, 'Create port'));
  portForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = { subnet_id: pSubnet.value, host: pHost.value, npu: Number(pNpu.value) };
    if (pIp.value.trim()) body['ip_address'] = pIp.value.trim();
    act('Port created', () => post('/api/v1/ports', body));
  });
  main.append(el('h3', { id: 'create-port' }, 'Create a port'), subnets.items.length && hosts.items.length ? portForm : el('p', { class: 'note' }, 'A port needs a subnet and a registered host.'));

  // Reachability.
  main.append(el('h2', {}, 'Reachability'));
  const portOption = (p: Port): HTMLOptionElement => el('option', { value: p.id }, `${p.host} NPU ${p.npu} · ${p.ip_address}`);
  const rSrc = el('select', { id: 'reach-src' }, ...ports.items.map(portOption));
  const rDst = el('select', { id: 'reach-dst' }, ...ports.items.map(portOption));
  const result = el('p', { id: 'reach-result', role: 'status' });
  const reachForm = el('form', { class: 'inline', 'aria-label': 'Reachability check' }, field('From port', rSrc), field('To port', rDst), el('button', { type: 'submit' }, 'Check'));
  reachForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clearError();
    void get<Reach>(`/api/v1/reachability${query({ src_port: rSrc.value, dst_port: rDst.value })}`).then(
      (r) => { result.textContent = `${r.reachable ? '✔ reachable' : '✘ not reachable'}: ${r.reason}`; },
      (e: unknown) => showError(e));
  });
  main.append(ports.items.length >= 2 ? reachForm : el('p', { class: 'note' }, 'The check needs two ports.'), result);
  setStatus(`Network: ${subnets.items.length} subnets, ${ports.items.length} ports`);
}
