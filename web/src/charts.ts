// ECharts with only the parts the dashboard uses (tree-shaken by esbuild), always the canvas renderer,
// with the aria component on: each chart gets a generated text description for screen readers.
import * as echarts from 'echarts/core';
import { GraphChart, HeatmapChart, LineChart } from 'echarts/charts';
import {
  AriaComponent,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  GraphChart,
  HeatmapChart,
  LineChart,
  AriaComponent,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
  CanvasRenderer,
]);

export type Chart = echarts.ECharts;
export type Option = echarts.EChartsCoreOption;

export function makeChart(container: HTMLElement, option: Option, description: string): Chart {
  container.setAttribute('role', 'img');
  container.setAttribute('aria-label', description);
  const chart = echarts.init(container, null, { renderer: 'canvas' });
  chart.setOption({ aria: { enabled: true }, animation: false, ...option });
  return chart;
}

export function resizeAll(charts: Chart[]): () => void {
  const onResize = (): void => {
    for (const c of charts) c.resize();
  };
  window.addEventListener('resize', onResize);
  return () => {
    window.removeEventListener('resize', onResize);
    for (const c of charts) c.dispose();
  };
}
