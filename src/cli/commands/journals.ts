/** `rostersync journals <origin_id> [--corpus all_journals|org_journals]`: journal recommendations (docs/service-contract.md, call 7). */
import { journalsCorpusSchema, type RecommendJournalsResponse } from '../../client/index.js';
import { EXIT } from '../../errors/user-facing-error.js';
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';
import { renderTable } from './manuscript.js';

interface JournalsArgs extends ServiceArgs {
  origin_id?: string;
  corpus?: string;
}

export const journalsCommand: CommandFactory = (ctx) => ({
  command: 'journals <origin_id>',
  describe: 'Recommend journals for a manuscript uploaded earlier',
  builder: (yargs) =>
    withServiceOptions(yargs)
      .positional('origin_id', { type: 'string', describe: 'The origin id the manuscript was uploaded with' })
      .option('corpus', { type: 'string', choices: journalsCorpusSchema.options, default: 'all_journals', describe: 'all_journals, or only the org_journals linked to the organization' }),
  handler: action(ctx, async (args: JournalsArgs) => {
    const { client } = connectService(args, ctx.io);
    const corpus = journalsCorpusSchema.parse(args.corpus ?? 'all_journals');
    const result = await client.recommendJournals(String(args.origin_id), { corpus }, callOptions(ctx.io));
    ctx.io.stdout.write(args.json ? `${JSON.stringify(result, null, 2)}\n` : renderJournals(result));
    return EXIT.ok;
  }),
});

export function renderJournals(result: RecommendJournalsResponse): string {
  if (result.recommended_journals.length === 0) return '(no journals recommended)\n';
  const rows = result.recommended_journals.map((j, i) => [
    String(i + 1),
    j.title,
    j.score.toFixed(3),
    j.publisher_name ?? '-',
    j.folder_name ?? '-',
    String(j.relevant_articles.length),
  ]);
  return `${renderTable(['#', 'journal', 'score', 'publisher', 'folder', 'articles'], rows)}\n`;
}
