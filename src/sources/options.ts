/**
 * What a pipeline file says about its roster (the `source:` key): the file, its format, the
 * reader options and the overlays. The readers own these options; the pipeline schema
 * (src/config/pipeline.ts) composes them.
 */
import { z } from 'zod';
import { EXAMPLE_LABELS, encodingOfLabel, unsupportedLabelReason } from './encoding/labels.js';

export const csvOptionsSchema = z
  .strictObject({
    /**
     * `auto`: a byte-order mark, else valid UTF-8, else a legacy encoding detected with certainty
     * (the file is refused when it is not certain). Or any label of the WHATWG Encoding Standard
     * (`windows-1250`, `koi8-r`, `shift_jis`, `gbk`, `big5`, `euc-kr`...): the bytes must not
     * contradict it, and a byte-order mark still wins.
     */
    encoding: z
      .string()
      .default('auto')
      .superRefine((label, ctx) => {
        if (label === 'auto' || encodingOfLabel(label) !== undefined) return;
        ctx.addIssue({
          code: 'custom',
          message:
            unsupportedLabelReason(label) ??
            `"${label}" is not an encoding label of the WHATWG Encoding Standard; use one such as ${EXAMPLE_LABELS.join(', ')} (or auto)`,
        });
      }),
    /** `auto` detects comma, semicolon, tab or pipe on a sample of the file. */
    delimiter: z.union([z.literal('auto'), z.enum([',', ';', '\t', '|'])]).default('auto'),
    /** 1-based line of the header row; title lines above it are skipped. */
    header_row: z.number().int().min(1).default(1),
  })
  .describe('CSV reader options');

export const xlsxOptionsSchema = z
  .strictObject({
    /** Sheet name, or its 1-based position in the workbook. */
    sheet: z.union([z.string().min(1), z.number().int().min(1)]).default(1),
    /** 1-based row of the header row. */
    header_row: z.number().int().min(1).default(1),
  })
  .describe('XLSX reader options');

const sourceFileShape = {
  /** Roster file, relative to the pipeline file. */
  file: z.string().min(1),
  /** Defaults from the file extension (.csv, .tsv, .txt → csv; .xlsx → xlsx). */
  format: z.enum(['csv', 'xlsx']).optional(),
  csv: csvOptionsSchema.optional(),
  xlsx: xlsxOptionsSchema.optional(),
};

/**
 * A file read after the source's own file: each of its rows replaces every row of the same
 * client_id in the files before it; a row whose client_id they lack is a new row. A file name
 * alone reads a CSV with every setting detected, and a rejected.csv as rostersync writes it (title
 * lines, error columns) without settings. Overlays are small (fixes), see src/sources/overlays.ts.
 */
export const overlaySchema = z.union([z.string().min(1), z.strictObject(sourceFileShape)]);
export type OverlayConfig = z.infer<typeof overlaySchema>;

export const sourceSchema = z.strictObject({
  ...sourceFileShape,
  /** Later files layered over `file`, in order: fixes to the export (a corrected rejected.csv). */
  overlays: z.array(overlaySchema).optional(),
});
export type SourceConfig = z.infer<typeof sourceSchema>;
/** One file of a source (the base file, or an overlay written out in full). */
export type SourceFileConfig = Omit<SourceConfig, 'overlays'>;
