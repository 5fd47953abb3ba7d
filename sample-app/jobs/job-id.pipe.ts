import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

/** `:id` as a positive integer, or a 400 that says so (Nest's ParseIntPipe accepts 0 and -1). */
@Injectable()
export class JobIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(id) || id <= 0) {
      throw new BadRequestException(`Job id must be a positive integer; received "${value.slice(0, 40)}".`);
    }
    return id;
  }
}
