"""A VQA teaching episode on disk: its images are PNG files in one `images/` folder of the run, data.jsonl rows point at
them by relative paths, reading them back gives the rendered pixels, and a stopped episode resumes to the same result."""
import json
from pathlib import Path

import numpy as np
import pytest

from dataenvgym.core import Datum, read_jsonl
from dataenvgym.domains.vqa_images import task_image
from dataenvgym.domains.vqa_scenes import render_scene
from dataenvgym.teaching.presets import teaching_setup
from dataenvgym.teaching.runner import run_episode


def _episode(out: Path, stop_after: int | None = None):
    env, policy = teaching_setup('skill-list', preset='tiny', domain='vqa')
    return run_episode(env, policy, out, seed=1, progress=False, stop_after=stop_after), env


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('vqa')
    straight, _ = _episode(tmp / 'straight')
    assert _episode(tmp / 'stopped', stop_after=1)[0] is None
    resumed, env = _episode(tmp / 'stopped')               # a fresh environment, as after a crash
    return tmp, straight, resumed, env


def test_images_are_png_files_that_rows_point_at(runs):
    tmp, *_ = runs
    run = tmp / 'straight'
    images = run / 'images'
    assert sorted(p.name for p in run.iterdir()) == ['curves.png', 'images', 'iteration_0', 'iteration_1', 'iteration_2',
                                                     'rejections.json', 'result.jsonl', 'run.json', 'summary.md']
    assert not list(run.glob('iteration_*/**/*.png')), 'images are shared by the iterations, not copied into each'
    assert not list(images.glob('.*')), 'no temporary file is left behind'
    rows = [json.loads(l) for l in (run / 'iteration_2' / 'data.jsonl').read_text().splitlines()]
    assert len(rows) == 80
    paths = {r['metadata']['image_path'] for r in rows}
    assert all(p.startswith('../images/') and p.endswith('.png') for p in paths)
    assert all((run / 'iteration_2' / p).is_file() for p in paths)
    assert {p.name for p in images.iterdir()} == {Path(p).name for p in paths}   # iteration 1's data is in iteration 2's


def test_reading_back_gives_the_rendered_pixels_without_the_scene(runs):
    tmp, _, _, env = runs
    folder = tmp / 'straight' / 'iteration_2'
    data = env.domain.load_assets(read_jsonl(folder / 'data.jsonl', Datum), folder)
    for d in data:
        rendered = np.asarray(render_scene(d.metadata['scene'], d.metadata['image_size']))
        no_scene = d.model_copy(update={'metadata': {k: v for k, v in d.metadata.items() if k != 'scene'}})
        np.testing.assert_array_equal(np.asarray(task_image(no_scene)), rendered)


def test_a_stopped_episode_resumes_to_the_same_result(runs):
    tmp, straight, resumed, env = runs
    assert resumed.model_dump(exclude={'out_dir', 'iterations'}) == straight.model_dump(exclude={'out_dir', 'iterations'})
    assert [l.val_accuracy for l in resumed.iterations] == [l.val_accuracy for l in straight.iterations]
    for k in (1, 2):
        a, b = (tmp / run / f'iteration_{k}' / 'data.jsonl' for run in ('straight', 'stopped'))
        assert a.read_text() == b.read_text()
    assert sorted(p.name for p in (tmp / 'stopped' / 'images').iterdir()) == sorted(p.name for p in (tmp / 'straight' / 'images').iterdir())
    # the restored data (iteration 1's) point at the run's PNG files by full paths
    restored = [d for d in env.data if d.metadata.get('image_path', '').startswith(str(tmp / 'stopped' / 'images'))]
    assert len(restored) == 40


def test_other_domains_keep_their_rows(tmp_path):
    env, policy = teaching_setup('skill-list', preset='tiny', domain='tools')
    env.config = env.config.model_copy(update={'iterations': 1})
    run_episode(env, policy, tmp_path, seed=0, progress=False)
    assert not (tmp_path / 'images').exists()
    assert all('image_path' not in json.loads(l)['metadata'] for l in (tmp_path / 'iteration_1' / 'data.jsonl').read_text().splitlines())
    from dataenvgym.teaching.viz import EpisodeExplorer
    with pytest.raises(ValueError, match='the tools domain draws no pictures'): EpisodeExplorer(tmp_path).scene_grid()


def test_the_episode_explorer_opens_the_saved_images(runs):
    from dataenvgym.teaching.viz import EpisodeExplorer
    tmp, *_ = runs
    ex = EpisodeExplorer(tmp / 'straight')
    new = ex.new_data(2)
    assert new and all(Path(d.metadata['image_path']).is_absolute() for d in ex.data(2))
    d = new[0]
    np.testing.assert_array_equal(np.asarray(task_image(d)), np.asarray(render_scene(d.metadata['scene'], d.metadata['image_size'])))


def test_the_scene_grid_shows_validation_scenes_before_and_after(runs):
    from dataenvgym.teaching.viz import EpisodeExplorer
    tmp, *_ = runs
    ex = EpisodeExplorer(tmp / 'straight')
    before = {a.task.id for a in ex.report(0).failures}
    now = {a.task.id for a in ex.report(2).failures}
    fig = ex.scene_grid(n=4, ncols=2)
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == min(4, len(before | now))
    assert all(ax.images[0].get_array().shape == (64, 64, 3) for ax in shown)
    title = fig._suptitle.get_text()
    assert f'fixed {len(before - now)}' in title and f'broken {len(now - before)}' in title and f'still wrong {len(before & now)}' in title
    assert all(any(t.get_text().startswith('iteration 2:') for t in ax.texts) for ax in shown)
