/** The reconciliation report: the `RunReport` contract, its renderings and the writer. */
export type * from './types.js';
export { renderConsoleSummary, type ConsoleSummaryOptions } from './console.js';
export { escapeHtml, renderHtml } from './html.js';
export { renderMarkdown } from './markdown.js';
export { writeFileAtomic, writeReport, type WriteReportOptions, type WrittenReport } from './write.js';
export { combinedIndexPath, writeCombinedIndex, type CombinedIndexInput } from './history.js';
export { reportRootFor } from './location.js';
