/** Public surface of the mapping layer: compile a mapping file, then map rows or a whole roster. */
export { compileMapping, type CompiledMapping, type CompileOptions, type MapRowResult } from './compile.js';
export { mapRoster, type MapRosterOptions, type RosterCounts, type RosterSummary } from './roster.js';
export { MappingError } from './errors.js';
export { mappingFileSchema, type MappingFile, type DuplicatePolicy, TRANSFORMS } from './schema.js';
export type { DesiredRecord, FieldValue, RejectedRow, RowProblem } from './types.js';
