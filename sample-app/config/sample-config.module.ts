import { Module } from '@nestjs/common';
import { SAMPLE_CONFIG } from './sample-config.token';
import { loadSampleConfig } from './sample.config';

/** Provides the SampleConfig read from the environment when the application starts. */
@Module({
  providers: [{ provide: SAMPLE_CONFIG, useFactory: () => loadSampleConfig(process.env) }],
  exports: [SAMPLE_CONFIG],
})
export class SampleConfigModule {}
