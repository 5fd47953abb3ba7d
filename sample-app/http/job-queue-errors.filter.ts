import { Catch, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import {
  ArgsNotSerializableError,
  ArgsTooLargeError,
  GraphValidationError,
  InvalidJobError,
  InvalidJobStateError,
  InvalidPauseTargetError,
  InvalidQueryError,
  JobNotFoundError,
  JobQueueError,
  UnknownJobTypeError,
} from 'nestjs-sql-job-queue';

/** Which of the library's typed errors are the client's fault, and how. */
const STATUS: Array<[abstract new (...args: never[]) => JobQueueError, HttpStatus]> = [
  [JobNotFoundError, HttpStatus.NOT_FOUND],
  [InvalidJobStateError, HttpStatus.CONFLICT],
  [GraphValidationError, HttpStatus.BAD_REQUEST],
  [InvalidJobError, HttpStatus.BAD_REQUEST],
  [ArgsNotSerializableError, HttpStatus.BAD_REQUEST],
  [ArgsTooLargeError, HttpStatus.BAD_REQUEST],
  [UnknownJobTypeError, HttpStatus.BAD_REQUEST],
  [InvalidQueryError, HttpStatus.BAD_REQUEST],
  [InvalidPauseTargetError, HttpStatus.BAD_REQUEST],
];

/**
 * Turns the queue's typed errors into HTTP answers with the library's own message, which already
 * says what to do; anything else is a server error. Nest's HttpExceptions never reach this filter.
 */
@Catch(JobQueueError)
export class JobQueueErrorsFilter implements ExceptionFilter<JobQueueError> {
  private readonly logger = new Logger(JobQueueErrorsFilter.name);

  catch(error: JobQueueError, host: ArgumentsHost): void {
    const status = STATUS.find(([type]) => error instanceof type)?.[1] ?? HttpStatus.INTERNAL_SERVER_ERROR;
    if (status === HttpStatus.INTERNAL_SERVER_ERROR) this.logger.error(error.message, error.stack);
    const response = host.switchToHttp().getResponse<{ status(code: number): { json(body: unknown): void } }>();
    response.status(status).json({ statusCode: status, error: error.code, message: error.message });
  }
}
