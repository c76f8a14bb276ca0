/**
 * The workbook's structure, found the way the Open Packaging Conventions say: the package
 * relationships name the workbook part, the workbook's relationships name its sheets, shared
 * strings and styles. Targets may be relative (Excel) or absolute (openpyxl writes
 * `/xl/worksheets/sheet1.xml`); nothing is assumed from fixed paths except as a fallback.
 */
import { posix } from 'node:path';
import { SourceError } from '../source-error.js';
import { attribute, parsePart } from './xml.js';
import { missingPart, type ZipPackage } from './zip-package.js';

export interface SheetEntry {
  name: string;
  /** `visible`, `hidden` or `veryHidden`. */
  state: string;
  /** Part name in the zip, or undefined when the relationship is missing. */
  part: string | undefined;
  /** Relationship type's last segment: `worksheet`, `chartsheet`, `dialogsheet`... */
  kind: string;
}

export interface WorkbookInfo {
  sheets: SheetEntry[];
  date1904: boolean;
  sharedStringsPart: string | undefined;
  stylesPart: string | undefined;
}

interface Relationship {
  type: string;
  target: string;
}

/** Resolves a relationship target against the folder of the part that holds the relationship. */
export function resolveTarget(sourcePart: string, target: string): string {
  const cleaned = target.replace(/\\/g, '/');
  const joined = cleaned.startsWith('/') ? cleaned : posix.join(posix.dirname(`/${sourcePart}`), cleaned);
  return posix.normalize(joined).replace(/^\/+/, '');
}

function relationshipsPartOf(part: string): string {
  const dir = posix.dirname(part);
  return `${dir === '.' ? '' : `${dir}/`}_rels/${posix.basename(part)}.rels`;
}

async function readRelationships(zip: ZipPackage, part: string): Promise<Map<string, Relationship>> {
  const relsPart = relationshipsPartOf(part);
  const found = new Map<string, Relationship>();
  if (!zip.has(relsPart)) return found;
  await parsePart(zip.file, relsPart, zip.text(relsPart, true), {
    open(name, attributes) {
      if (name !== 'Relationship') return;
      const id = attributes.Id;
      const target = attributes.Target;
      if (id === undefined || target === undefined || attributes.TargetMode === 'External') return;
      found.set(id, { type: attributes.Type ?? '', target: resolveTarget(part, target) });
    },
    close() {},
    text() {},
  });
  return found;
}

function typeName(type: string): string {
  return type.slice(type.lastIndexOf('/') + 1);
}

function findByType(relationships: Map<string, Relationship>, type: string): string | undefined {
  for (const relationship of relationships.values()) if (typeName(relationship.type) === type) return relationship.target;
  return undefined;
}

export async function readWorkbook(zip: ZipPackage): Promise<WorkbookInfo> {
  const file = zip.file;
  const packageRels = await readRelationships(zip, '');
  let workbookPart = findByType(packageRels, 'officeDocument');
  if (!workbookPart || !zip.has(workbookPart)) workbookPart = zip.has('xl/workbook.xml') ? 'xl/workbook.xml' : workbookPart;
  if (workbookPart?.toLowerCase().endsWith('.bin')) {
    throw new SourceError(file, `${file} is an Excel Binary Workbook (.xlsb), which rostersync does not read.`, {
      hint: 'Open it in Excel and save it as "Excel Workbook (.xlsx)".',
    });
  }
  if (!workbookPart && zip.has('content.xml')) {
    throw new SourceError(file, `${file} is an OpenDocument spreadsheet (.ods), not an Excel workbook.`, {
      hint: 'Open it in LibreOffice or Excel and save it as "Excel Workbook (.xlsx)".',
    });
  }
  if (!workbookPart) {
    throw new SourceError(file, `${file} is not an Excel workbook: the zip archive has no workbook part (xl/workbook.xml).`, {
      hint: 'Check that this is the roster workbook; otherwise open it in Excel and save it as "Excel Workbook (.xlsx)".',
    });
  }
  if (!zip.has(workbookPart)) throw missingPart(file, workbookPart);

  const relationships = await readRelationships(zip, workbookPart);
  const sheets: SheetEntry[] = [];
  let date1904 = false;
  let inSheets = false;
  await parsePart(file, workbookPart, zip.text(workbookPart, true), {
    open(name, attributes) {
      if (name === 'workbookPr') {
        const value = attributes.date1904;
        date1904 = value === '1' || value === 'true';
      } else if (name === 'sheets') {
        inSheets = true;
      } else if (name === 'sheet' && inSheets) {
        const id = attribute(attributes, 'id', true);
        const relationship = id === undefined ? undefined : relationships.get(id);
        sheets.push({
          name: attributes.name ?? '',
          state: attributes.state ?? 'visible',
          part: relationship?.target,
          kind: relationship ? typeName(relationship.type) : 'worksheet',
        });
      }
    },
    close(name) {
      if (name === 'sheets') inSheets = false;
    },
    text() {},
  });
  return {
    sheets,
    date1904,
    sharedStringsPart: findByType(relationships, 'sharedStrings'),
    stylesPart: findByType(relationships, 'styles'),
  };
}
