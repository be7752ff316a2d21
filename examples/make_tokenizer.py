"""Trains the tiny byte-level BPE tokenizer of the examples and tests on the
bundled corpus (examples/data/shakespeare-train.txt), offline and
deterministically, and saves it as a transformers tokenizer (tokenizer.json,
tokenizer_config.json) into OUT_DIR: a checkpoint folder, so that
`python -m tfm.data prepare` finds the checkpoint's own tokenizer there.

Special tokens: <|endoftext|> (EOS, appended to every document),
<|system|>, <|user|>, <|assistant|>, <|end|>, and a chat template whose
assistant turns are marked for `return_assistant_tokens_mask`.

    make_tokenizer.py OUT_DIR [--vocab 512] [--corpus FILE]
"""

import argparse
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
# Each turn is <|role|> content <|end|>; the assistant's content and its
# <|end|> are what it is trained to say ({% generation %}).
CHAT_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'assistant' %}<|assistant|>"
    "{% generation %}{{ m['content'] }}<|end|>{% endgeneration %}"
    "{% else %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def build(corpus, vocab):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    with open(corpus, encoding="utf-8") as f:
        lines = f.read().splitlines()
    tok.train_from_iterator(lines, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--corpus", default=os.path.join(HERE, "data", "shakespeare-train.txt"))
    args = ap.parse_args()
    tokenizer = build(args.corpus, args.vocab)
    os.makedirs(args.out, exist_ok=True)
    tokenizer.save_pretrained(args.out)
    print(f"wrote {args.out}: a {len(tokenizer)}-token byte-level BPE tokenizer")


if __name__ == "__main__":
    main()
