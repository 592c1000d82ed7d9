"""The Colab T4 path on the GPU that is here, in minutes: the GPU tutorials' functions on a tiny Qwen2 model, as JSON.

    python benchmarks/colab_t4.py                       # makes a tiny Qwen2 chat model (testing.tiny_chat_model)
    python benchmarks/colab_t4.py --model FOLDER --out DIR --steps 4

The same calls as the GPU cells of tutorials 06 and 07, through `repair.train`'s runners on the `qwen2.5-1.5b-t4`
config cut to smoke size (`smoke_config`) with the model in place of Qwen: `load_agent` (Unsloth where it is
installed, else transformers in the card's precision and, with bitsandbytes, in 4 bits), SFT with gradient
checkpointing and LoRA, the adapter saved and reloaded trainable, GRPO with the repair environment in the loop, and the
evaluation beside the scripted baselines. Prints one JSON object: the device and its compute capability, the precision
chosen (`lm.precision`), whether Unsloth and 4 bits were used, seconds and peak GPU memory of each phase, the GRPO reward
curve and the evaluation's success rates. Runs on a CPU too (device 'cpu', precision 'fp32'), which checks the script.
"""
import argparse, json, tempfile, time
from pathlib import Path


def phase(name: str, fn, report: dict):
    "Run `fn`, recording its seconds and the GPU's peak memory (MB) under `report[name]`."
    import torch
    if torch.cuda.is_available(): torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    out = fn()
    report[name] = {'seconds': round(time.perf_counter() - t0, 1),
                    'peak_memory_mb': round(torch.cuda.max_memory_allocated() / 2**20) if torch.cuda.is_available()
                    else None}
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--model', help='a saved chat model folder (default: a tiny Qwen2 made here)')
    p.add_argument('--out', help='run folder (default: a temporary one)')
    p.add_argument('--steps', type=int, default=4, help='SFT and GRPO steps')
    p.add_argument('--seeds', type=int, default=4, help='seeds of each phase')
    a = p.parse_args(argv)
    import importlib.util, torch
    if torch.cuda.is_available() and importlib.util.find_spec('unsloth'): import unsloth  # noqa: F401 (first)
    from dataenvgym.lm import precision, quantization, unsloth_usable
    from dataenvgym.repair.train import TRAIN_CONFIGS, run_eval, run_grpo, run_sft, smoke_config
    from dataenvgym.testing import tiny_chat_model
    out = Path(a.out or tempfile.mkdtemp(prefix='colab-t4-'))
    model = a.model or str(tiny_chat_model(out / 'tiny-qwen2'))
    config = smoke_config(TRAIN_CONFIGS['qwen2.5-1.5b-t4'].model_copy(update={'model': model}), a.seeds, a.steps)
    cuda = torch.cuda.is_available()
    report = {'device': torch.cuda.get_device_name() if cuda else 'cpu',
              'capability': list(torch.cuda.get_device_capability()) if cuda else None,
              'precision': precision(), 'unsloth': unsloth_usable(), 'four_bit': quantization() is not None,
              'model': model}
    t0 = time.perf_counter()
    sft = phase('sft', lambda: run_sft(config, out / 'qwen'), report)
    grpo = phase('grpo', lambda: run_grpo(config, out / 'qwen'), report)
    ev = phase('eval', lambda: run_eval(config, out / 'qwen'), report)
    report.update(sft_loss=sft['loss'], reward_curve=grpo['reward'], success_rate=ev['success_rate'],
                  seconds=round(time.perf_counter() - t0, 1), out=str(out))
    print(json.dumps(report))
    return report


if __name__ == '__main__':
    main()
