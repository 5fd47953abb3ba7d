import { InvalidOptionError } from '../../lib';
import { fitResultLimit, largestResultFor } from '../../lib/database/packet-limit';

const MiB = 1024 * 1024;

describe('fitResultLimit (MySQL max_allowed_packet)', () => {
  it('keeps a limit that fits, the 4 MiB default on the MariaDB default 16 MiB packet included', () => {
    expect(largestResultFor(16 * MiB)).toBe(7.5 * MiB);
    expect(fitResultLimit(4 * MiB, true, 16 * MiB)).toBe(4 * MiB);
    expect(fitResultLimit(7.5 * MiB, false, 16 * MiB)).toBe(7.5 * MiB);
  });

  it('lowers the default on a server configured with a smaller packet', () => {
    expect(fitResultLimit(4 * MiB, true, 4 * MiB)).toBe(1.5 * MiB);
  });

  it('refuses an explicit limit the server cannot take, naming the option and the packet', () => {
    let caught: unknown;
    try {
      fitResultLimit(40 * MiB, false, 16 * MiB);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidOptionError);
    expect((caught as InvalidOptionError).option).toBe('maxResultBytes');
    expect((caught as Error).message).toMatch(/at most 7864320 on this server: its max_allowed_packet is 16777216 bytes/);
  });
});
