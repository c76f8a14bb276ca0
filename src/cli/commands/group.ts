/**
 * `rostersync group create`: creates an authors group (docs/service-contract.md, call 5). Group creation is not idempotent:
 * an ambiguous failure is reported as such (exit 5) and never retried blindly.
 */
import type { Argv } from 'yargs';
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

interface GroupCreateArgs extends ServiceArgs {
  name?: string;
  'owner-team'?: string;
  'editor-team'?: string[];
  'viewer-team'?: string[];
}

export const groupCommand: CommandFactory = (ctx) => ({
  command: 'group <command>',
  describe: 'Manage authors groups',
  builder: (yargs: Argv) =>
    yargs
      .command({
        command: 'create',
        describe: 'Create an authors group (teams must already exist in the service)',
        builder: (sub: Argv) =>
          withServiceOptions(sub)
            .option('name', { type: 'string', demandOption: true, describe: 'Name of the new group' })
            .option('owner-team', { type: 'string', demandOption: true, describe: 'Team with owner rights' })
            .option('editor-team', { type: 'string', array: true, default: [], describe: 'Team with editor rights (repeatable)' })
            .option('viewer-team', { type: 'string', array: true, default: [], describe: 'Team with viewer rights (repeatable)' }),
        handler: action(ctx, async (args: GroupCreateArgs) => {
          const name = args.name?.trim() ?? '';
          const owner = args['owner-team']?.trim() ?? '';
          if (name === '' || owner === '') {
            throw new UserFacingError('group create needs a non-empty --name and --owner-team', {
              hint: 'Example: rostersync group create --name "Cardiology pool" --owner-team "Editorial Office"',
            });
          }
          const { client } = connectService(args, ctx.io);
          const created = await client.createGroup(
            {
              group_name: name,
              owner_team: owner,
              editor_teams: (args['editor-team'] ?? []).map(String),
              viewer_teams: (args['viewer-team'] ?? []).map(String),
            },
            callOptions(ctx.io),
          );
          ctx.io.stdout.write(
            args.json ? `${JSON.stringify(created)}\n` : `created authors group ${created.authors_group_id} "${name}"\n`,
          );
          return EXIT.ok;
        }),
      })
      .demandCommand(1, 'Name a group command: create'),
  handler: () => undefined,
});
