/** Roster readers: CSV and XLSX files streamed as rows with provenance ("Readers"). */
export { openSource, type OpenSourceOptions } from './open-source.js';
export { sha256File } from './sha256-file.js';
export { SourceError } from './source-error.js';
export { detectDelimiter, type CsvDelimiter } from './csv/sniff.js';
export type {
  CellValue,
  OpenedSource,
  Provenance,
  SourceItem,
  SourceRow,
  SourceRowError,
} from './types.js';
