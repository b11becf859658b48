// The topology's JSON export (GET /api/v1/topology/export?format=json): every node and link, for the
// matrix views and the switch pages.
import { get } from './api';

export interface TopoNode {
  id: number;
  name: string;
  tier: 'host' | 'leaf' | 'spine' | 'core';
  state: string;
  npus?: { index: number; port: string; state: string; link: number | null }[];
  scalable_unit?: number;
  superpod?: number;
}
export interface TopoLink {
  id: number;
  source: number;
  target: number;
  source_port: string;
  target_port: string;
  tier: string;
  bandwidth_gbps: number;
  state: string;
  npu?: number;
}
export interface TopoGraph {
  name: string;
  nodes: TopoNode[];
  links: TopoLink[];
}

export const fetchGraph = (): Promise<TopoGraph> => get<TopoGraph>('/api/v1/topology/export?format=json');

export const STATE_LEVEL: Record<string, number> = { healthy: 0, allocated: 1, 'sub-health': 2, isolated: 3 };
export const LEVEL_STATE = ['healthy', 'allocated', 'sub-health', 'isolated'];
